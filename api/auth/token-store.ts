import type { Principal } from "./principal.ts";

/**
 * Resolves bearer tokens to principals. The embedded default keeps tokens in memory; the Redis store comes with
 * the tokens issue. `verify` answers undefined for an unknown, revoked or expired token; it throws
 * TokenStoreUnavailable when the backing store cannot be reached (the API then fails closed with 503).
 */
export interface TokenStore {
  verify(token: string): Promise<Principal | undefined>;
}

export class TokenStoreUnavailable extends Error {
  constructor(cause?: unknown) {
    super("Token store unavailable", { cause });
    this.name = "TokenStoreUnavailable";
  }
}
