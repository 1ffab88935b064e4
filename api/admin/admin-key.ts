import { timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { secretHash } from "../auth/token-format.ts";
import { ApiError } from "../errors.ts";

export const adminKeyHeader = "X-Admin-Key";

/**
 * Lets a request through when its X-Admin-Key equals the configured key. Both sides are hashed first, so the
 * constant-time comparison has equal lengths and reveals neither the key's length nor its content.
 */
export function requireAdminKey(adminKey: string): RequestHandler {
  const expected = secretHash(adminKey);
  return (req, _res, next) => {
    const given = req.get(adminKeyHeader);
    if (given === undefined || !timingSafeEqual(secretHash(given), expected)) {
      throw new ApiError(401, "Unauthorized", `Invalid or missing ${adminKeyHeader} header`);
    }
    next();
  };
}
