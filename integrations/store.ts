import { DependencyUnavailable } from "../core/errors.ts";

/**
 * What the integrations service keeps, as keys (redis-keys.ts) and string values: connection records, whose tokens are
 * sealed (AES-256-GCM, token-cipher.ts) before they get here, each user's index of them, single-use connect sessions
 * and sign-in states, refresh locks and revoked app credentials. A deployment keeps them in Redis (RedisStore), shared
 * by every replica; `kubecrew dev` without KUBECREW_REDIS_URL in memory (MemoryStore). One contract suite runs over both
 * (test/integration/integrations/store-contract.test.ts). A store that cannot be reached rejects with
 * ConnectionStoreUnavailable, which the error mapper answers 503.
 */
/** The connection store (Redis) cannot be reached: a 503 with Retry-After (core/errors.ts). */
export class ConnectionStoreUnavailable extends DependencyUnavailable {
  override name = "ConnectionStoreUnavailable";

  constructor(cause: unknown) {
    // Logged once per outage by the Redis client, not once per request.
    super("connection store", "The connection store (Redis) is unreachable", {
      cause,
      answer: "The connection store (Redis) is unreachable; try again shortly",
    });
  }
}

export interface IntegrationsStore {
  get(key: string): Promise<string | undefined>;
  getMany(keys: string[]): Promise<(string | undefined)[]>;
  /** Reads and deletes in one step: a value is handed out at most once. */
  take(key: string): Promise<string | undefined>;
  /** Writes a value that disappears after ttlMs. */
  putFor(key: string, value: string, ttlMs: number): Promise<void>;
  /** Writes a value that disappears at atMs (milliseconds since the epoch). */
  putUntil(key: string, value: string, atMs: number): Promise<void>;
  /** Overwrites a value that exists; false, and nothing written, when there is none. */
  replace(key: string, value: string): Promise<boolean>;
  exists(key: string): Promise<boolean>;
  /** One entry of an index (a user's connections: `<provider>/<product>` → connection id). */
  indexGet(key: string, field: string): Promise<string | undefined>;
  indexAll(key: string): Promise<Record<string, string>>;
  /** A record and its index entry, written together. */
  putIndexed(
    record: { key: string; value: string },
    index: { key: string; field: string; value: string },
  ): Promise<void>;
  /** A record and its index entry, removed together. */
  deleteIndexed(recordKey: string, index: { key: string; field: string }): Promise<void>;
  /** Takes the lock `key` for ttlMs under `holder` unless someone holds it; true when taken. */
  tryLock(key: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Frees the lock only while `holder` still holds it (a holder that overran its TTL never frees another's). */
  unlock(key: string, holder: string): Promise<void>;
  /** Whether the store answers now (the /health and /ready probes). */
  reachable(): Promise<boolean>;
  /** Where the state lives, as /health reports it: Redis, or this process's memory (`kubecrew dev`). */
  readonly kind: "redis" | "memory";
}
