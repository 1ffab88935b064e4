import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

// Delete the lock only if it still holds our token, so a holder that overran its TTL never frees someone else's lock.
const releaseScript = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** A Redis lock (SET NX PX + compare-and-delete release) shared by every replica. */
export interface Lock {
  release(): Promise<void>;
}

export async function tryLock(redis: Redis, key: string, ttlMs: number): Promise<Lock | undefined> {
  const token = randomBytes(16).toString("hex");
  const acquired = await redis.set(key, token, "PX", ttlMs, "NX");
  if (acquired !== "OK") return undefined;
  return {
    async release() {
      await redis.eval(releaseScript, 1, key, token);
    },
  };
}
