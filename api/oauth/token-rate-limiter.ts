import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { TokenStoreUnavailable } from "../auth/token-store.ts";

export interface TokenRequestLimits {
  /** Requests per window for one client_id from one source address; and tokens issued to one client per window. */
  perClient: number;
  /** Requests per window from one source address. */
  perIp: number;
  windowSeconds: number;
  /** How many requests a failed client authentication counts as. */
  failedAuthCost: number;
}

/** Admitted, or refused until retryAfterSeconds have passed. */
export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/**
 * Fixed-window limits on token requests: per source address (every request), per client_id at one source address
 * (every request naming it from there), and per client (requests that authenticated as it). Each costs one point; a
 * failed client authentication costs failedAuthCost in all, so guessing secrets runs out of attempts fast while a
 * well-behaved client keeps its full budget. Failures count against the guesser's address and its pair with the
 * client only: someone else's wrong secrets never lock a client out at its own addresses. Failures of the store
 * surface as TokenStoreUnavailable (503), never as an admission or a 500.
 */
export class TokenRateLimiter {
  private readonly byClient: RateLimiterAbstract;
  private readonly byClientAtIp: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;
  private readonly failedAuthCost: number;

  constructor(
    limiters: { byClient: RateLimiterAbstract; byClientAtIp: RateLimiterAbstract; byIp: RateLimiterAbstract },
    failedAuthCost: number,
  ) {
    this.byClient = limiters.byClient;
    this.byClientAtIp = limiters.byClientAtIp;
    this.byIp = limiters.byIp;
    this.failedAuthCost = failedAuthCost;
  }

  /** Counters in Redis, shared by every API replica. */
  static redis(redis: Redis, limits: TokenRequestLimits, prefix: string): TokenRateLimiter {
    const common = { storeClient: redis, duration: limits.windowSeconds, rejectIfRedisNotReady: true };
    return new TokenRateLimiter(
      {
        byClient: new RateLimiterRedis({ ...common, points: limits.perClient, keyPrefix: `${prefix}ratelimit:client` }),
        byClientAtIp: new RateLimiterRedis({
          ...common,
          points: limits.perClient,
          keyPrefix: `${prefix}ratelimit:client-ip`,
        }),
        byIp: new RateLimiterRedis({ ...common, points: limits.perIp, keyPrefix: `${prefix}ratelimit:ip` }),
      },
      limits.failedAuthCost,
    );
  }

  /** Counters in this process, for the embedded default without Redis. */
  static memory(limits: TokenRequestLimits): TokenRateLimiter {
    const common = { duration: limits.windowSeconds };
    return new TokenRateLimiter(
      {
        byClient: new RateLimiterMemory({ ...common, points: limits.perClient }),
        byClientAtIp: new RateLimiterMemory({ ...common, points: limits.perClient }),
        byIp: new RateLimiterMemory({ ...common, points: limits.perIp }),
      },
      limits.failedAuthCost,
    );
  }

  admitAddress(address: string): Promise<Admission> {
    return admit(this.byIp, address);
  }

  /** A request naming clientId from address, before it is known to be the client's. */
  admitClientAt(clientId: string, address: string): Promise<Admission> {
    return admit(this.byClientAtIp, clientAtAddress(clientId, address));
  }

  /** A request that authenticated as the client: the client's own budget, wherever it asks from. */
  admitClient(clientId: string): Promise<Admission> {
    return admit(this.byClient, clientId);
  }

  /**
   * Charges the rest of a failed authentication's cost to the address and, when one was named, the client_id at
   * that address (never to the client as a whole: that would let anyone lock it out).
   */
  async failedAuthentication(address: string, clientId?: string): Promise<void> {
    const extra = this.failedAuthCost - 1;
    if (extra <= 0) return;
    await guard(
      Promise.all([
        this.byIp.penalty(address, extra),
        ...(clientId === undefined ? [] : [this.byClientAtIp.penalty(clientAtAddress(clientId, address), extra)]),
      ]),
    );
  }
}

/** The address first: it never holds the separator, so any client_id after it keeps the key unambiguous. */
const clientAtAddress = (clientId: string, address: string) => `${address}|${clientId}`;

async function admit(limiter: RateLimiterAbstract, key: string): Promise<Admission> {
  try {
    await limiter.consume(key, 1);
    return { admitted: true };
  } catch (outcome) {
    if (outcome instanceof RateLimiterRes) {
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)) };
    }
    throw new TokenStoreUnavailable(outcome);
  }
}

async function guard<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new TokenStoreUnavailable(err);
  }
}
