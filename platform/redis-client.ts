import { Redis } from "ioredis";
import type { Logger } from "../core/logger.ts";

export interface RedisClientOptions {
  log: Logger;
  /** Commands slower than this reject (the service answers 503 rather than hang). */
  commandTimeoutMs?: number;
  /** What stops working while Redis is away, for the one log line per outage. */
  impact?: string;
  /**
   * Commands issued in one turn of the event loop go to Redis in one write (ioredis' auto-pipelining): the crew API
   * checks a bearer token per request, and many requests at once then cost one round trip instead of one each.
   */
  autoPipelining?: boolean;
}

/** The default command timeout: a hung Redis costs a request at most this long before its 503. */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;

/**
 * A Redis client (the API's token store and rate limiter, the integrations service's store) that fails fast and heals by itself: no offline queue
 * (while disconnected every command rejects at once, so requests get 503 instead of waiting), a command timeout
 * (for a Redis that accepts connections but does not answer), and endless reconnection with a short backoff (so the
 * API recovers by itself when Redis returns). Connection trouble is logged once per outage, not per retry.
 */
export function connectRedis(url: string, options: RedisClientOptions): Redis {
  const { log } = options;
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    enableAutoPipelining: options.autoPipelining ?? false,
    commandTimeout: options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  let down = false;
  redis.on("error", (err: Error) => {
    if (down) return;
    down = true;
    log.warn(
      { reason: err.message },
      `Redis unreachable; ${options.impact ?? "token requests"} answer 503 until it returns`,
    );
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

/**
 * Whether an error is Redis being away (refused, closed, not answering, offline with no queue) rather than a bug:
 * the caller answers 503 with Retry-After for these.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (
    err.name === "MaxRetriesPerRequestError" ||
    err.message === "Command timed out" ||
    err.message === "Connection is closed." ||
    err.message.startsWith("Stream isn't writeable") ||
    code === "ECONNREFUSED" ||
    code === "ECONNRESET"
  );
}

/**
 * Whether Redis answers a PING now (readiness probes answer 503 while it does not): a connected but hung server
 * fails it within the command timeout, a closed connection at once.
 */
export const redisAnswers = (redis: Redis): Promise<boolean> =>
  redis.ping().then(
    (reply) => reply === "PONG",
    () => false,
  );
