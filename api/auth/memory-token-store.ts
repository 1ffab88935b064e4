import { createHash, timingSafeEqual } from "node:crypto";
import type { Principal } from "./principal.ts";
import type { TokenStore } from "./token-store.ts";

const sha256 = (token: string) => createHash("sha256").update(token).digest();

/** Tokens held in memory as SHA-256 hashes, for the embedded default and tests. */
export class MemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, { hash: Buffer; principal: Principal }>();

  add(token: string, principal: Principal): void {
    const hash = sha256(token);
    this.tokens.set(hash.toString("hex"), { hash, principal });
  }

  async verify(token: string): Promise<Principal | undefined> {
    const hash = sha256(token);
    const entry = this.tokens.get(hash.toString("hex"));
    // The map lookup is by hash, so timing reveals nothing about the token; compare anyway as defence in depth.
    return entry && timingSafeEqual(entry.hash, hash) ? entry.principal : undefined;
  }
}
