import type { Request, Response } from "express";
import { ConsoleSessions, SESSION_COOKIE, type ConsoleIdentity } from "../../console/session.ts";

/**
 * A console session cookie as the console signs one for `identity` (with the server's KUBECREW_CONSOLE_SESSION_SECRET),
 * for tests that need a second signed-in user before OIDC sign-in gives one.
 */
export function consoleSessionCookie(secret: string, identity: ConsoleIdentity): { cookie: string; csrf: string } {
  const sessions = new ConsoleSessions({ secret, ttlSeconds: 3600 });
  let header = "";
  const res = { append: (_name: string, value: string) => (header = value) } as unknown as Response;
  const { csrf } = sessions.signIn({ secure: false } as Request, res, identity);
  const value = new RegExp(`^${SESSION_COOKIE}=([^;]*)`).exec(header)![1]!;
  return { cookie: `${SESSION_COOKIE}=${value}`, csrf };
}
