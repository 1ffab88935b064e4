import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { GuessLimit } from "../../console/router.ts";
import { sourceAddressKey } from "../oauth/source-address.ts";
import { TokenStoreUnavailable } from "./token-store.ts";

export interface AdminKeyGuessLimits {
  /** Wrong admin keys one source address may send per window; past them it waits for the window's end. */
  failuresPerIp: number;
  windowSeconds: number;
}

/**
 * Wrong admin keys per source address, wherever the key is sent (X-Admin-Key on /admin/…, the console's sign-in): past
 * the limit the address is refused before its key is compared, so a refused guess learns nothing. Only failures count,
 * so an admin's scripts are never limited; an IPv6 /64 counts as one address. Failures of the store surface as
 * TokenStoreUnavailable (503).
 */
export class AdminKeyGuesses implements GuessLimit {
  private readonly failures: RateLimiterAbstract;

  private constructor(failures: RateLimiterAbstract) {
    this.failures = failures;
  }

  /** Counters in Redis, shared by every API replica. */
  static redis(redis: Redis, limits: AdminKeyGuessLimits, prefix: string): AdminKeyGuesses {
    return new AdminKeyGuesses(
      new RateLimiterRedis({
        storeClient: redis,
        points: limits.failuresPerIp,
        duration: limits.windowSeconds,
        keyPrefix: `${prefix}ratelimit:admin-key`,
        rejectIfRedisNotReady: true,
      }),
    );
  }

  /** Counters in this process (one process: `kubecrew dev`). */
  static memory(limits: AdminKeyGuessLimits): AdminKeyGuesses {
    return new AdminKeyGuesses(new RateLimiterMemory({ points: limits.failuresPerIp, duration: limits.windowSeconds }));
  }

  async blockedFor(ip: string | undefined): Promise<number | undefined> {
    const state = await guard(this.failures.get(sourceAddressKey(ip)));
    if (!state || state.consumedPoints < this.failures.points) return undefined;
    return Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  }

  async failed(ip: string | undefined): Promise<void> {
    // penalty, not consume: counting the failure that reaches the limit must not throw.
    await guard(this.failures.penalty(sourceAddressKey(ip), 1));
  }
}

async function guard<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new TokenStoreUnavailable(err);
  }
}
