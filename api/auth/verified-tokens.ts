import type { Redis } from "ioredis";
import type { Principal } from "./principal.ts";

/** The channel RedisTokenStore's revoke scripts publish on (under the key prefix). */
export const revocationChannel = (prefix: string) => `${prefix}revocations`;

/**
 * Bearer tokens this replica verified a moment ago (by the token's hash, never the token), so a request does not cost
 * a Redis round trip. Safe to keep because every change that ends a token reaches it at once: the revoke scripts
 * publish on the revocation channel in the same atomic step that deletes the token, before the revoker gets its answer,
 * and every replica forgets everything it remembers on a message. Nothing is answered from memory while the
 * subscription is not confirmed (before it is, after its connection drops, until it is subscribed again), an entry
 * lives at most `ttlMs` and never past its token's expiry, and a verification that a revocation overtook is not
 * remembered. During a Redis outage only a token verified in the last `ttlMs` keeps working (nothing can be revoked
 * then: revoking goes through Redis); every other gets 503.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, { principal: Principal; until: number }>();
  private readonly subscriber: Redis;
  private readonly channel: string;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private live = false;
  /** Moves on with every forget: a verification started before one is not remembered. */
  private generation = 0;

  constructor(options: { subscriber: Redis; prefix: string; ttlMs: number; maxEntries?: number; now?: () => number }) {
    this.subscriber = options.subscriber;
    this.channel = revocationChannel(options.prefix);
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
    this.subscriber.on("message", () => this.forget());
    for (const event of ["close", "end", "error", "reconnecting"]) {
      this.subscriber.on(event, () => {
        this.live = false;
        this.forget();
      });
    }
    this.subscriber.on("ready", () => void this.subscribe());
    if (this.subscriber.status === "ready") void this.subscribe();
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
      this.forget();
      this.live = this.subscriber.status === "ready";
    } catch {
      this.live = false;
    }
  }

  /** Whether the subscription is confirmed (tests wait for it). */
  get subscribed(): boolean {
    return this.live;
  }

  /** The principal of a token verified less than ttlMs ago, while revocations are being heard. */
  get(hash: string): Principal | undefined {
    if (!this.live) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.until > this.now()) return entry.principal;
    this.entries.delete(hash);
    return undefined;
  }

  /** Call before asking Redis; hand the answer to remember() with it. */
  begin(): number {
    return this.generation;
  }

  remember(hash: string, principal: Principal, expiresAt: number | undefined, generation: number): void {
    if (!this.live || generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const until = Math.min(this.now() + this.ttlMs, expiresAt ?? Infinity);
    this.entries.set(hash, { principal, until });
  }

  forget(): void {
    this.generation++;
    this.entries.clear();
  }

  close(): void {
    this.live = false;
    this.forget();
    this.subscriber.disconnect();
  }
}
