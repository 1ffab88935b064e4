import { createHmac, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";
import { parseCookie, stringifySetCookie } from "cookie";
import * as client from "openid-client";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import type { OidcSettings } from "./config.ts";
import type { ConsoleIdentity } from "./session.ts";

const FLOW_COOKIE = "kubecrew_console_oidc";
const FLOW_SECONDS = 600;

/** What the browser carries between leaving for the provider and coming back: PKCE verifier, state, nonce. */
interface Flow {
  verifier: string;
  state: string;
  nonce: string;
  exp: number;
}

/**
 * Who the ID token says signed in, as the console's identity: members of an admin group and admin email addresses are
 * org admins (every crew); everyone else is a user, who sees and starts their own executions only. The subject is the
 * email address when the provider verified it (user tokens name users the same way), the `sub` claim otherwise.
 */
export function identityFromClaims(claims: Record<string, unknown>, settings: OidcSettings): ConsoleIdentity {
  const email = typeof claims.email === "string" && claims.email_verified !== false ? claims.email.toLowerCase() : "";
  const raw = claims[settings.groupsClaim];
  const groups = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? [raw] : [];
  const admin =
    (email !== "" && settings.adminEmails.includes(email)) || groups.some((g) => settings.adminGroups.includes(g));
  const subject = email || String(claims.sub);
  const name = typeof claims.name === "string" && claims.name ? `${claims.name} <${subject}>` : subject;
  return admin
    ? { kind: "org", crews: "*", subject, admin: true, name, user: subject }
    : { kind: "user", crews: "*", subject, admin: false, name };
}

/**
 * OpenID Connect sign-in (authorization code + PKCE, state and nonce) with openid-client against any provider: the
 * discovery document, token and JWKS requests go through the outbound URL policy's fetch.
 */
export class OidcSignIn {
  private configuration?: Promise<client.Configuration>;
  private readonly settings: OidcSettings;
  private readonly fetch: Fetch;
  private readonly key: Buffer;
  private readonly publicUrl: string | undefined;

  constructor(options: { settings: OidcSettings; fetch: Fetch; secret: string; publicUrl?: string }) {
    this.settings = options.settings;
    this.fetch = options.fetch;
    this.key = Buffer.from(options.secret);
    this.publicUrl = options.publicUrl;
  }

  /** Sends the browser to the provider, remembering the flow in a short-lived signed cookie. */
  async start(req: Request, res: Response): Promise<void> {
    const config = await this.config();
    const flow: Flow = {
      verifier: client.randomPKCECodeVerifier(),
      state: client.randomState(),
      nonce: client.randomNonce(),
      exp: Math.floor(Date.now() / 1000) + FLOW_SECONDS,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(req),
      scope: "openid email profile",
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: "S256",
      state: flow.state,
      nonce: flow.nonce,
    });
    const payload = Buffer.from(JSON.stringify(flow)).toString("base64url");
    this.setFlowCookie(req, res, `${payload}.${this.sign(payload)}`, FLOW_SECONDS);
    res.redirect(303, url.href);
  }

  /** Completes the code exchange for the provider's redirect back; undefined when the flow is not this browser's. */
  async finish(req: Request, res: Response): Promise<ConsoleIdentity | undefined> {
    const flow = this.readFlow(req);
    this.setFlowCookie(req, res, "", 0);
    if (!flow) return undefined;
    const config = await this.config();
    const current = new URL(req.originalUrl, this.redirectUri(req));
    const tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    return identityFromClaims({ ...tokens.claims() }, this.settings);
  }

  private config(): Promise<client.Configuration> {
    this.configuration ??= (async () => {
      const { issuer, clientId, clientSecret } = this.settings;
      // Plain http only for a loopback test provider (the outbound policy refuses loopback in a cluster).
      const execute = issuer.protocol === "http:" ? [client.allowInsecureRequests] : [];
      const config = await client.discovery(issuer, clientId, clientSecret, undefined, {
        execute,
        timeout: 15,
        [client.customFetch]: this.fetch,
      });
      config.timeout = 10;
      return config;
    })().catch((err: unknown) => {
      this.configuration = undefined; // try the discovery again on the next sign-in
      throw err;
    });
    return this.configuration;
  }

  private redirectUri(req: Request): string {
    const origin = this.publicUrl ?? `${req.protocol}://${req.get("host")}`;
    return `${origin}/console/auth/callback`;
  }

  private sign(payload: string): string {
    return createHmac("sha256", this.key).update(`oidc-flow.${payload}`).digest("base64url");
  }

  private readFlow(req: Request): Flow | undefined {
    const [payload, signature] = (parseCookie(req.headers.cookie ?? "")[FLOW_COOKIE] ?? "").split(".");
    if (!payload || !signature) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const flow = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Flow;
    return flow.exp * 1000 > Date.now() ? flow : undefined;
  }

  private setFlowCookie(req: Request, res: Response, value: string, maxAge: number): void {
    // Lax, not Strict: the provider's redirect back is a cross-site navigation, and it must carry this cookie.
    const cookie = stringifySetCookie({
      name: FLOW_COOKIE,
      value,
      path: "/console/auth",
      httpOnly: true,
      sameSite: "lax",
      secure: req.secure,
      maxAge,
    });
    res.append("Set-Cookie", cookie);
  }
}
