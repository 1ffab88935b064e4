import type { Request, RequestHandler } from "express";
import { unauthorized, serviceUnavailable } from "../errors.ts";
import type { Principal } from "./principal.ts";
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

/** Resolves `Authorization: Bearer <token>`; fails closed with 503 when the token store cannot be reached. */
export function bearerAuth(tokens: TokenStore): RequestHandler {
  return async (req, _res, next) => {
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
