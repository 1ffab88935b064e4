import { timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { secretHash } from "../auth/token-format.ts";
import { SAFE_METHODS, type SessionAuth } from "../auth/session-auth.ts";
import { ApiError, csrfRefused } from "../errors.ts";

export const adminKeyHeader = "X-Admin-Key";

/**
 * Lets a request through when its X-Admin-Key equals the configured key, or when it comes from an org admin's console
 * session. Both sides of the key are hashed first, so the constant-time comparison has equal lengths and reveals
 * neither the key's length nor its content.
 */
export function requireAdminKey(adminKey: string | undefined, sessions?: SessionAuth): RequestHandler {
  const expected = adminKey === undefined ? undefined : secretHash(adminKey);
  return (req, _res, next) => {
    const given = req.get(adminKeyHeader);
    // Without the header, an org admin's console session (and its CSRF token on a state-changing request).
    if (given === undefined && req.headers.authorization === undefined && sessions?.isAdmin(req)) {
      if (!SAFE_METHODS.has(req.method) && !sessions.csrfValid(req)) throw csrfRefused();
      return next();
    }
    // Without a configured key the admin API is there for console admins only: absent (404) to everyone else.
    if (!expected) throw new ApiError(404, "Not Found", `No route for ${req.method} ${req.originalUrl.split("?")[0]}`);
    if (given === undefined || !timingSafeEqual(secretHash(given), expected)) {
      throw new ApiError(401, "Unauthorized", `Invalid or missing ${adminKeyHeader} header`);
    }
    next();
  };
}
