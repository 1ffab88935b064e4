import type { Router } from "express";
import type { Redis } from "ioredis";
import type { Logger } from "../../core/logger.ts";
import { adminRoutes } from "../admin/admin-routes.ts";
import { adminPaths } from "../admin/openapi-paths.ts";
import type { ExtraPaths } from "../openapi.ts";
import { tokenEndpointPaths } from "../oauth/openapi-paths.ts";
import { tokenEndpoint } from "../oauth/token-endpoint.ts";
import { TokenRateLimiter } from "../oauth/token-rate-limiter.ts";
import { AdminKeyGuesses } from "./admin-key-guesses.ts";
import type { AuthConfig } from "./config.ts";
import type { SessionAuth } from "./session-auth.ts";
import { MemoryTokenStore } from "./memory-token-store.ts";
import { RedisTokenStore } from "./redis-token-store.ts";
import { VerifiedTokens } from "./verified-tokens.ts";
import type { ManagedTokenStore } from "./token-store.ts";

/** What the crew API needs for authentication: pass to createApp as `tokens`, `extraRouters` and `extraPaths`. */
export interface ApiAuth {
  tokens: ManagedTokenStore;
  /** The token endpoint (`POST /oauth/token`) and, with an admin key configured, the admin API (`/admin/…`). */
  routers: Router[];
  paths: ExtraPaths;
  /** Wrong admin keys per source address: give the same to the console (its sign-in takes the key too). */
  adminKeyGuesses: AdminKeyGuesses;
  /** Ends what it holds open (the revocation subscription). */
  close(): void;
}

function assemble(
  store: ManagedTokenStore,
  limiter: TokenRateLimiter,
  adminKeyGuesses: AdminKeyGuesses,
  config: AuthConfig,
  log: Logger,
  sessions: SessionAuth | undefined,
): ApiAuth {
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
  if (config.adminKey || sessions) {
    // X-Admin-Key when configured; an org admin's console session in any case.
    routers.push(
      adminRoutes({
        store,
        ...(config.adminKey ? { adminKey: config.adminKey } : {}),
        ...(sessions ? { sessions } : {}),
        adminKeyGuesses,
        log,
      }),
    );
  }
  if (config.adminKey) paths = { ...paths, ...adminPaths() };
  return { tokens: store, routers, paths, adminKeyGuesses, close: () => undefined };
}

/**
 * Tokens, clients and rate-limit counters in Redis: what `kubecrew api` (and `kubecrew dev` with KUBECREW_REDIS_URL) serve.
 * Give it a client from connectRedis, which fails fast while Redis is down and reconnects by itself.
 */
export function createRedisAuth(options: {
  redis: Redis;
  config: AuthConfig;
  log: Logger;
  sessions?: SessionAuth;
  /** The console's, when it has them; new ones in Redis otherwise. */
  adminKeyGuesses?: AdminKeyGuesses;
}): ApiAuth {
  const { redis, config, log } = options;
  const prefix = config.redisKeyPrefix;
  // A second connection hears revocations (a subscribed connection can do nothing else).
  const verified =
    config.tokenCacheMs > 0
      ? new VerifiedTokens({ subscriber: redis.duplicate(), prefix, ttlMs: config.tokenCacheMs })
      : undefined;
  const store = new RedisTokenStore(redis, { prefix, ...(verified ? { verified } : {}) });
  const guesses = options.adminKeyGuesses ?? AdminKeyGuesses.redis(redis, config.adminKeyGuesses, prefix);
  const limiter = TokenRateLimiter.redis(redis, config.rateLimits, prefix);
  const auth = assemble(store, limiter, guesses, config, log, options.sessions);
  return { ...auth, close: () => verified?.close() };
}

/** The same in this process's memory: the embedded default without Redis. */
export function createMemoryAuth(options: {
  store?: MemoryTokenStore;
  config: AuthConfig;
  log: Logger;
  sessions?: SessionAuth;
  adminKeyGuesses?: AdminKeyGuesses;
}): ApiAuth {
  const store = options.store ?? new MemoryTokenStore();
  const limiter = TokenRateLimiter.memory(options.config.rateLimits);
  const guesses = options.adminKeyGuesses ?? AdminKeyGuesses.memory(options.config.adminKeyGuesses);
  return assemble(store, limiter, guesses, options.config, options.log, options.sessions);
}
