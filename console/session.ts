import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";
import { parseCookie, stringifySetCookie } from "cookie";
import { z } from "zod";

export const SESSION_COOKIE = "kubecrew_console";
export const CSRF_HEADER = "x-csrf-token";

/** Who is signed in to the console: the principal the crew API sees, plus whether they administer the org. */
export const consoleIdentity = z.object({
  kind: z.enum(["org", "user"]),
  crews: z.union([z.literal("*"), z.array(z.string())]),
  subject: z.string().min(1),
  /** Org admins manage tokens and service accounts (the Status tab). */
  admin: z.boolean(),
  /** What the console shows as the user's name (an email, or the subject). */
  name: z.string().optional(),
  /** An org admin who is a person: their user, for their own connected apps (the admin key's session has none). */
  user: z.string().min(1).optional(),
});
export type ConsoleIdentity = z.infer<typeof consoleIdentity>;

const sessionPayload = consoleIdentity.extend({
  csrf: z.string().min(32),
  /** Expiry, seconds since the epoch. */
  exp: z.number().int(),
});
export type ConsoleSession = z.infer<typeof sessionPayload>;

export interface ConsoleSessionOptions {
  /** The HMAC key the cookie is signed with (at least 32 bytes); replicas of the API share it. */
  secret: string;
  ttlSeconds: number;
  now?: () => Date;
}

/**
 * Console sessions as a signed cookie (HMAC-SHA256 over the JSON payload, as express's signed cookies and
 * iron-session do): httpOnly, SameSite=Strict, Secure over HTTPS, nothing kept on the server, so every API replica
 * sharing the secret accepts it. Each session carries a random CSRF token the page sends back in X-CSRF-Token.
 */
export class ConsoleSessions {
  private readonly key: Buffer;
  private readonly ttlSeconds: number;
  private readonly now: () => Date;

  constructor(options: ConsoleSessionOptions) {
    if (Buffer.byteLength(options.secret) < 32) throw new Error("The console session secret needs 32 bytes or more");
    this.key = Buffer.from(options.secret);
    this.ttlSeconds = options.ttlSeconds;
    this.now = options.now ?? (() => new Date());
  }

  /** Signs the identity in: a new session with a new CSRF token, set as the cookie. */
  signIn(req: Request, res: Response, identity: ConsoleIdentity): ConsoleSession {
    const session: ConsoleSession = {
      ...consoleIdentity.parse(identity),
      csrf: randomBytes(32).toString("base64url"),
      exp: Math.floor(this.now().getTime() / 1000) + this.ttlSeconds,
    };
    const payload = Buffer.from(JSON.stringify(session)).toString("base64url");
    this.setCookie(req, res, `${payload}.${this.sign(payload)}`, this.ttlSeconds);
    return session;
  }

  signOut(req: Request, res: Response): void {
    this.setCookie(req, res, "", 0);
  }

  /** The request's session, if its cookie is signed with our key and has not expired. */
  read(req: Request): ConsoleSession | undefined {
    const value = parseCookie(req.headers.cookie ?? "")[SESSION_COOKIE];
    const [payload, signature, ...rest] = (value ?? "").split(".");
    if (!payload || !signature || rest.length) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let parsed;
    try {
      parsed = sessionPayload.safeParse(JSON.parse(Buffer.from(payload, "base64url").toString("utf8")));
    } catch {
      return undefined;
    }
    if (!parsed.success || parsed.data.exp * 1000 <= this.now().getTime()) return undefined;
    return parsed.data;
  }

  /** The crew API's view of the session (SessionAuth). */
  principal(req: Request) {
    const session = this.read(req);
    if (!session) return undefined;
    const { kind, crews, subject, user } = session;
    return { kind, crews, subject, ...(kind === "org" && user ? { user } : {}) };
  }

  /** Whether the request's session is an org admin's (the admin API accepts it). */
  isAdmin(req: Request): boolean {
    return this.read(req)?.admin === true;
  }

  /** Whether X-CSRF-Token is the session's token (constant-time). */
  csrfValid(req: Request): boolean {
    const session = this.read(req);
    const header = req.headers[CSRF_HEADER];
    if (!session || typeof header !== "string") return false;
    const given = Buffer.from(header);
    const expected = Buffer.from(session.csrf);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private sign(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }

  private setCookie(req: Request, res: Response, value: string, maxAge: number): void {
    const cookie = stringifySetCookie({
      name: SESSION_COOKIE,
      value,
      path: "/",
      httpOnly: true,
      sameSite: "strict",
      secure: req.secure,
      maxAge,
    });
    res.append("Set-Cookie", cookie);
  }
}
