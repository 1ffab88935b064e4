import type { Request, RequestHandler } from "express";
import { csrfRefused, unauthorized, serviceUnavailable } from "../errors.ts";
import type { Principal } from "./principal.ts";
import { SAFE_METHODS, type SessionAuth } from "./session-auth.ts";
import { TokenStoreUnavailable, type TokenStore } from "./token-store.ts";

const principals = new WeakMap<Request, Principal>();

/** The caller resolved by `bearerAuth`; routes behind it always have one. */
export function principalOf(req: Request): Principal {
  const principal = principals.get(req);
  if (!principal) throw unauthorized();
  return principal;
}

export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

/**
 * Resolves `Authorization: Bearer <token>`; fails closed with 503 when the token store cannot be reached. Without an
 * Authorization header, a console session (when configured) is the caller: 403 for a state-changing request without
 * the session's CSRF token.
 */
export function bearerAuth(tokens: TokenStore, sessions?: SessionAuth): RequestHandler {
  return async (req, _res, next) => {
    const session = req.headers.authorization === undefined ? sessions?.principal(req) : undefined;
    if (session) {
      if (!SAFE_METHODS.has(req.method) && !sessions?.csrfValid(req)) throw csrfRefused();
      principals.set(req, session);
      return next();
    }
    const token = bearerToken(req.headers.authorization);
    if (!token) throw unauthorized();
    let principal: Principal | undefined;
    try {
      principal = await tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenStoreUnavailable) {
        throw serviceUnavailable("Authentication is temporarily unavailable; try again shortly");
      }
      throw err;
    }
    if (!principal) throw unauthorized();
    principals.set(req, principal);
    next();
  };
}
