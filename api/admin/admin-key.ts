import { timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import type { AdminKeyGuesses } from "../auth/admin-key-guesses.ts";
import { secretHash } from "../auth/token-format.ts";
import { SAFE_METHODS, type SessionAuth } from "../auth/session-auth.ts";
import { ApiError, csrfRefused, tooManyRequests } from "../errors.ts";

export const adminKeyHeader = "X-Admin-Key";

/**
 * Lets a request through when its X-Admin-Key equals the configured key, or when it comes from an org admin's console
 * session. Both sides of the key are hashed first, so the constant-time comparison has equal lengths and reveals
 * neither the key's length nor its content. Wrong keys are counted per source address (`guesses`): past the limit
 * the address gets 429 before its key is compared.
 */
export function requireAdminKey(
  adminKey: string | undefined,
  sessions?: SessionAuth,
  guesses?: AdminKeyGuesses,
): RequestHandler {
  const expected = adminKey === undefined ? undefined : secretHash(adminKey);
  return async (req, _res, next) => {
    const given = req.get(adminKeyHeader);
    // Without the header, an org admin's console session (and its CSRF token on a state-changing request).
    if (given === undefined && req.headers.authorization === undefined && sessions?.isAdmin(req)) {
      if (!SAFE_METHODS.has(req.method) && !sessions.csrfValid(req)) throw csrfRefused();
      return next();
    }
    // Without a configured key the admin API is there for console admins only: absent (404) to everyone else.
    if (!expected) throw new ApiError(404, "Not Found", `No route for ${req.method} ${req.originalUrl.split("?")[0]}`);
    if (given === undefined) throw new ApiError(401, "Unauthorized", `Invalid or missing ${adminKeyHeader} header`);
    const wait = await guesses?.blockedFor(req.ip);
    if (wait !== undefined) throw tooManyRequests(`Too many wrong admin keys; retry after ${wait} seconds`, wait);
    if (!timingSafeEqual(secretHash(given), expected)) {
      await guesses?.failed(req.ip);
      throw new ApiError(401, "Unauthorized", `Invalid or missing ${adminKeyHeader} header`);
    }
    next();
  };
}
