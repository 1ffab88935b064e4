import type { Router } from "express";
import type { Redis } from "ioredis";
import type { Logger } from "../../core/logger.ts";
import { adminRoutes } from "../admin/admin-routes.ts";
import { adminPaths } from "../admin/openapi-paths.ts";
import type { ExtraPaths } from "../openapi.ts";
import { tokenEndpointPaths } from "../oauth/openapi-paths.ts";
import { tokenEndpoint } from "../oauth/token-endpoint.ts";
import { TokenRateLimiter } from "../oauth/token-rate-limiter.ts";
import type { AuthConfig } from "./config.ts";
import { MemoryTokenStore } from "./memory-token-store.ts";
import { RedisTokenStore } from "./redis-token-store.ts";
import type { ManagedTokenStore } from "./token-store.ts";

/** What the crew API needs for authentication: pass to createApp as `tokens`, `extraRouters` and `extraPaths`. */
export interface ApiAuth {
  tokens: ManagedTokenStore;
  /** The token endpoint (`POST /oauth/token`) and, with an admin key configured, the admin API (`/admin/…`). */
  routers: Router[];
  paths: ExtraPaths;
}

function assemble(store: ManagedTokenStore, limiter: TokenRateLimiter, config: AuthConfig, log: Logger): ApiAuth {
  const routers = [
    tokenEndpoint({
      store,
      limiter,
      accessTokenTtlSeconds: config.tokenTtlSeconds,
      realm: config.realm,
      log,
    }),
  ];
  let paths = tokenEndpointPaths();
  if (config.adminKey) {
    routers.push(adminRoutes({ store, adminKey: config.adminKey, log }));
    paths = { ...paths, ...adminPaths() };
  }
  return { tokens: store, routers, paths };
}

/**
 * Tokens, clients and rate-limit counters in Redis: what `kubecrew api` (and `kubecrew dev` with REDIS_URL) serve.
 * Give it a client from connectRedis, which fails fast while Redis is down and reconnects by itself.
 */
export function createRedisAuth(options: { redis: Redis; config: AuthConfig; log: Logger }): ApiAuth {
  const { redis, config, log } = options;
  const prefix = config.redisKeyPrefix;
  const store = new RedisTokenStore(redis, { prefix });
  return assemble(store, TokenRateLimiter.redis(redis, config.rateLimits, prefix), config, log);
}

/** The same in this process's memory: the embedded default without Redis. */
export function createMemoryAuth(options: { store?: MemoryTokenStore; config: AuthConfig; log: Logger }): ApiAuth {
  const store = options.store ?? new MemoryTokenStore();
  return assemble(store, TokenRateLimiter.memory(options.config.rateLimits), options.config, options.log);
}
