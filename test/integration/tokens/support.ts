import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Redis } from "ioredis";
import * as oidc from "openid-client";
import { connectRedis, redisReady } from "../../../platform/redis-client.ts";
import { RedisTokenStore } from "../../../api/auth/redis-token-store.ts";
import { silentLogger, type Logger } from "../../../core/logger.ts";
import { devConfigSchema, repoRoot } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";

export { waitFor } from "../../support/wait-for.ts";

/** A key prefix of its own per suite, so suites can share the test Redis. */
export const uniquePrefix = (name: string) => `test-${name}-${randomBytes(4).toString("hex")}:`;

export interface TokensDev {
  dev: RunningDev;
  url: string;
  /** A store on the same Redis and prefix, to set up clients and tokens as the CLI would. */
  store: RedisTokenStore;
  redis: Redis;
  /** The Redis key prefix of this server's tokens, clients and counters. */
  prefix: string;
  stop(): Promise<void>;
}

/** `kubecrew dev` with KUBECREW_REDIS_URL: the example crews, tokens and clients in Redis, the token endpoint mounted. */
export async function startTokensDev(
  redisUrl: string,
  env: Record<string, string> = {},
  log: Logger = silentLogger(),
): Promise<TokensDev> {
  const config = devConfigSchema.parse({
    PORT: "0",
    KUBECREW_REDIS_URL: redisUrl,
    KUBECREW_DEFAULT_CREW: "research",
    KUBECREW_REDIS_KEY_PREFIX: uniquePrefix("dev"),
    KUBECREW_OAUTH_RATE_LIMIT_PER_CLIENT: "10000",
    KUBECREW_OAUTH_RATE_LIMIT_PER_IP: "10000",
    // Suites that send wrong admin keys on purpose; test/integration/hardening/guess-limits.test.ts tests the limit.
    KUBECREW_ADMIN_KEY_FAILURES_PER_IP: "10000",
    ...env,
  });
  const dev = await startDev(config, log);
  const redis = connectRedis(redisUrl, { log: silentLogger() });
  await redisReady(redis);
  const store = new RedisTokenStore(redis, { prefix: config.auth.redisKeyPrefix });
  return {
    dev,
    url: dev.url,
    store,
    redis,
    prefix: config.auth.redisKeyPrefix,
    async stop() {
      redis.disconnect();
      await dev.stop();
    },
  };
}

export const basic = (clientId: string, clientSecret: string) =>
  "Basic " + Buffer.from(`${clientId}:${clientSecret}`).toString("base64");

/** A raw request to the token endpoint. */
export async function tokenRequest(
  url: string,
  options: {
    authorization?: string;
    body?: string;
    contentType?: string;
    method?: string;
    headers?: Record<string, string>;
  } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization) headers.authorization = options.authorization;
  if (options.contentType !== "") headers["content-type"] = options.contentType ?? "application/x-www-form-urlencoded";
  const res = await fetch(`${url}/oauth/token`, {
    method: options.method ?? "POST",
    headers,
    ...(options.method === "GET" ? {} : { body: options.body ?? "grant_type=client_credentials" }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** An access token obtained the way a service account would: openid-client's client credentials grant. */
export async function clientCredentialsToken(tokenEndpoint: string, clientId: string, clientSecret: string) {
  const issuer = new URL(tokenEndpoint).origin;
  const config = new oidc.Configuration(
    { issuer, token_endpoint: tokenEndpoint },
    clientId,
    undefined,
    oidc.ClientSecretBasic(clientSecret),
  );
  oidc.allowInsecureRequests(config); // loopback http in tests
  return oidc.clientCredentialsGrant(config);
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Every key in the Redis with its value in every form Redis gives it: the readable value by type (GET, HGETALL,
 * ZRANGE, SMEMBERS, LRANGE), the TTL, and the raw serialised value (DUMP).
 */
export async function dumpRedis(redis: Redis): Promise<string> {
  const lines: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "COUNT", "500");
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === "string") value = await redis.get(key);
      else if (type === "hash") value = await redis.hgetall(key);
      else if (type === "zset") value = await redis.zrange(key, "0", "-1", "WITHSCORES");
      else if (type === "set") value = await redis.smembers(key);
      else if (type === "list") value = await redis.lrange(key, 0, -1);
      const raw = await redis.dumpBuffer(key);
      lines.push(`${key} ${type} ${JSON.stringify(value)} ${raw?.toString("latin1") ?? ""}`);
    }
  } while (cursor !== "0");
  return lines.join("\n");
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `kubecrew <args>` as a user would, against the given environment. */
export function kubecrew(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const { PATH, HOME } = process.env;
    execFile(
      process.execPath,
      [join(repoRoot, "cli/main.ts"), ...args],
      { env: { PATH, HOME, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
