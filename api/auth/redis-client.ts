import { Redis } from "ioredis";
import type { Logger } from "../../core/logger.ts";

export interface RedisClientOptions {
  log: Logger;
  /** Commands slower than this reject (the API answers 503 rather than hang). */
  commandTimeoutMs?: number;
}

/**
 * A Redis client for the API's token store and rate limiter that fails fast and heals by itself: no offline queue
 * (while disconnected every command rejects at once, so requests get 503 instead of waiting), a command timeout
 * (for a Redis that accepts connections but does not answer), and endless reconnection with a short backoff (so the
 * API recovers by itself when Redis returns). Connection trouble is logged once per outage, not per retry.
 */
export function connectRedis(url: string, options: RedisClientOptions): Redis {
  const { log } = options;
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: options.commandTimeoutMs ?? 2000,
    maxRetriesPerRequest: 0,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  let down = false;
  redis.on("error", (err: Error) => {
    if (down) return;
    down = true;
    log.warn({ reason: err.message }, "Redis unreachable; token requests answer 503 until it returns");
  });
  redis.on("ready", () => {
    if (down) log.info("Redis reachable again");
    down = false;
  });
  return redis;
}

/** Resolves when the client is connected (or rejects after timeoutMs); for commands and tests that need Redis now. */
export async function redisReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      reject(new Error(`Redis not reachable within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once("ready", onReady);
  });
}
