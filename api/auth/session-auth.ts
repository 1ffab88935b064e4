import type { Request } from "express";
import type { Principal } from "./principal.ts";

/**
 * A browser session beside bearer tokens: the web console signs its user in with a cookie and calls the same crew API.
 * A request with an `Authorization` header is judged by its bearer token alone; without one, the session's principal
 * is the caller, and a state-changing request must also carry the session's CSRF token.
 */
export interface SessionAuth {
  /** The signed-in principal of a valid, unexpired session cookie; undefined otherwise. */
  principal(req: Request): Principal | undefined;
  /** Whether the session is an org admin's: the admin API (`/admin/…`) accepts it as it accepts X-Admin-Key. */
  isAdmin(req: Request): boolean;
  /** Whether the request carries the CSRF token of its session (checked on every method but GET, HEAD, OPTIONS). */
  csrfValid(req: Request): boolean;
}

export const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);
