import { generateKeyPairSync } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, {
  type Adapter,
  type AdapterPayload,
  type ClientMetadata,
  type KoaContextWithOIDC,
} from "oidc-provider";

/** The provider's storage, in this process's memory (one store per provider, so tests do not share grants). */
function memoryAdapter() {
  const store = new Map<string, { payload: AdapterPayload; expiresAt?: number }>();
  const grants = new Map<string, Set<string>>();
  return class MemoryAdapter implements Adapter {
    private readonly name: string;
    constructor(name: string) {
      this.name = name;
    }
    private key(id: string) {
      return `${this.name}:${id}`;
    }
    async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      const key = this.key(id);
      store.set(key, { payload, ...(expiresIn ? { expiresAt: Date.now() + expiresIn * 1000 } : {}) });
      if (payload.grantId) {
        if (!grants.has(payload.grantId)) grants.set(payload.grantId, new Set());
        grants.get(payload.grantId)!.add(key);
      }
    }
    async find(id: string) {
      const entry = store.get(this.key(id));
      if (!entry || (entry.expiresAt !== undefined && entry.expiresAt < Date.now())) return undefined;
      return entry.payload;
    }
    async findByUserCode(userCode: string) {
      return [...store.values()].find((entry) => entry.payload.userCode === userCode)?.payload;
    }
    async findByUid(uid: string) {
      return [...store.values()].find((entry) => entry.payload.uid === uid)?.payload;
    }
    async consume(id: string) {
      const entry = store.get(this.key(id));
      if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const key of grants.get(grantId) ?? []) store.delete(key);
      grants.delete(grantId);
    }
  };
}

/** The account the provider signs in automatically; tests change `hd` / `tid` to act as another organisation. */
export interface TestAccount {
  sub: string;
  email: string;
  hd?: string;
  tid?: string;
}

export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: "client_secret_post" | "client_secret_basic";
}

/**
 * A real OpenID provider (`oidc-provider`) on loopback for tests: authorization code with PKCE, refresh tokens,
 * ID tokens carrying `hd` and `tid`, RFC 7009 revocation. It signs the test account in and consents without a
 * browser page, so an HTTP client that follows redirects and keeps cookies completes a sign-in.
 */
export interface OidcTestProvider {
  issuer: string;
  account: TestAccount;
  /** Lifetime of access tokens issued from now on. */
  accessTokenTtlSeconds: number;
  /** Issue a new refresh token on each refresh (the old one is then consumed and reusing it revokes the grant). */
  rotateRefreshTokens: boolean;
  /** Leave refresh_token out of refresh responses, as Google does. */
  omitRefreshTokenOnRefresh: boolean;
  /** The user declines on the consent screen. */
  declineConsent: boolean;
  /** Salesforce's `instance_url` (the org's API origin) to add to authorization-code token responses. */
  instanceUrl?: string;
  /** Leave expires_in out of every token response, as Salesforce and Notion do. */
  omitExpiresIn: boolean;
  /** Successful refresh_token grants so far, counted by the provider itself. */
  refreshCount(): number;
  /** Every token value the provider issued (access, refresh, ID tokens), to look for in storage. */
  issuedTokens(): string[];
  isAccessTokenActive(token: string): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startOidcProvider(options: {
  clients: TestClient[];
  scopes?: string[];
  port?: number;
}): Promise<OidcTestProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let refreshes = 0;
  const issued: string[] = [];

  const fixture: OidcTestProvider = {
    issuer,
    account: { sub: "test-user-1", email: "ada@example.com" },
    accessTokenTtlSeconds: 3600,
    rotateRefreshTokens: false,
    omitRefreshTokenOnRefresh: false,
    omitExpiresIn: false,
    declineConsent: false,
    refreshCount: () => refreshes,
    issuedTokens: () => [...issued],
    async isAccessTokenActive(token) {
      return (await provider.AccessToken.find(token)) !== undefined;
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    adapter: memoryAdapter(),
    jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "test-signing-key", use: "sig", alg: "RS256" }] },
    clients: options.clients.map((client): ClientMetadata => ({
      ...client,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: client.token_endpoint_auth_method ?? "client_secret_post",
    })),
    cookies: { keys: ["kubecrew-test-cookie-key"] },
    // Scopes the provider grants besides the OpenID ones (unknown scopes are dropped, as real providers refuse them).
    scopes: ["openid", "offline_access", ...(options.scopes ?? [])],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false }, revocation: { enabled: true } },
    claims: { openid: ["sub", "hd", "tid"], email: ["email", "email_verified"], profile: ["name"] },
    // Put the scope claims (hd, tid, email) into the ID token, as Google and Microsoft do.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ ...fixture.account, sub: id, email_verified: true, name: "Ada Lovelace" }),
    }),
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => fixture.rotateRefreshTokens,
    ttl: {
      AccessToken: () => fixture.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
      Session: 3600,
      Interaction: 600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });

  provider.on("grant.success", (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc.params?.["grant_type"] === "refresh_token") refreshes += 1;
    const body = ctx.body as Record<string, unknown> | undefined;
    for (const name of ["access_token", "refresh_token", "id_token"]) {
      if (typeof body?.[name] === "string") issued.push(body[name]);
    }
  });

  // Notion's authorization requests carry no scope (it grants per page); oidc-provider issues tokens only for an
  // OpenID request, so the stand-in reads a scopeless request as `openid`.
  provider.use(async (ctx, next) => {
    if (ctx.path === "/auth" && ctx.method === "GET" && !ctx.query["scope"])
      ctx.query = { ...ctx.query, scope: "openid" };
    await next();
  });

  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as Record<string, unknown> | undefined;
    if (
      ctx.path === "/token" &&
      fixture.instanceUrl &&
      ctx.oidc?.params?.["grant_type"] === "authorization_code" &&
      body
    )
      body["instance_url"] = fixture.instanceUrl;
    if (ctx.path === "/token" && fixture.omitExpiresIn && body) delete body["expires_in"];
    if (
      ctx.path === "/token" &&
      fixture.omitRefreshTokenOnRefresh &&
      ctx.oidc?.params?.["grant_type"] === "refresh_token" &&
      body
    ) {
      delete body["refresh_token"];
    }
  });

  // Signs the test account in and grants whatever the client asked for: no login or consent page.
  async function interact(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === "login") {
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: fixture.account.sub } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (fixture.declineConsent) {
      await provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "The user declined" },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const grant = details.grantId
      ? (await provider.Grant.find(details.grantId))!
      : new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params["client_id"]) });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  const callback = provider.callback();
  server.on("request", (req, res) => {
    if (req.url?.startsWith("/interaction/")) {
      interact(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    void callback(req, res);
  });

  return fixture;
}
