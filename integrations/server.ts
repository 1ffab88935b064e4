import express, { type Express } from "express";
import { listen } from "../platform/http/server.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { createAccessTokens } from "./access-tokens.ts";
import type { IntegrationsConfig } from "./config.ts";
import { createSignInStore } from "./connect-sessions.ts";
import { createConnectionStore } from "./connection-store.ts";
import { createOAuthClients } from "./oauth-clients.ts";
import { redisKeys } from "./redis-keys.ts";
import { RedisStore } from "./redis-store.ts";
import type { IntegrationsStore } from "./store.ts";
import { browserRoutes } from "./routes/browser.ts";
import { errorHandler } from "./routes/error-handler.ts";
import { healthRoutes } from "./routes/health.ts";
import { internalApiRoutes } from "./routes/internal-api.ts";
import { createSignIn } from "./sign-in.ts";
import { createTokenCipher } from "./token-cipher.ts";
import { refuseDeepJson } from "../platform/http/json-depth.ts";
import { refuseWrongMethods } from "../platform/http/wrong-methods.ts";
import { connectRedis, redisReady } from "../platform/redis-client.ts";
import { documentRoutes } from "./routes/document.ts";
import { appsRoutes } from "./routes/apps.ts";
import { createAppCredentialRevocations } from "./apps/app-credential-revocations.ts";
import { createAppToolCalls } from "./apps/app-tool-calls.ts";
import { registeredRoutes, type RegisteredRoute } from "./routes/registered-routes.ts";
import { requestSpans, tracedAppToolCalls, tracedFetch } from "./tracing.ts";

export interface IntegrationsService {
  url: string;
  /** Every method and path the app registered (express syntax, `:param`): what /openapi.json must describe. */
  routes: RegisteredRoute[];
  stop(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  now?: () => Date;
}

/** The service's routes over a store, not yet listening: what `start` serves and `kubecrew dev` mounts at /oauthsvc. */
export interface IntegrationsApp {
  app: Express;
  routes: RegisteredRoute[];
  /** Closes its outbound client; the store is the caller's. */
  close(): Promise<void>;
}

/** Starts the integrations service on config.host:config.port (0 picks a free port), its store in Redis. */
export async function start(config: IntegrationsConfig, options: StartOptions = {}): Promise<IntegrationsService> {
  const logger = options.logger ?? createLogger({ level: config.logLevel, name: "integrations" });
  // Fails fast and heals by itself: no offline queue, a command timeout, endless reconnection (platform/redis-client.ts).
  const redis = connectRedis(config.redisUrl, {
    log: logger,
    commandTimeoutMs: config.redisCommandTimeoutMs,
    impact: "connection requests",
  });
  await redisReady(redis, 5000).catch(() => logger.warn("Redis is not reachable yet; requests answer 503 until it is"));
  const service = createIntegrationsApp(config, new RedisStore(redis), { ...options, logger });

  const server = await listen(service.app, config.host, config.port).catch(async (err: unknown) => {
    await service.close();
    redis.disconnect();
    throw err;
  });
  const { url } = server;
  logger.info(
    {
      url,
      publicUrl: config.publicUrl.href,
      providers: configuredProviders(config),
    },
    "Integrations service listening",
  );

  return {
    url,
    routes: service.routes,
    async stop() {
      await server.stop();
      await service.close();
      redis.disconnect();
    },
  };
}

/** The providers with at least one product that has client credentials. */
export function configuredProviders(config: IntegrationsConfig): string[] {
  return [...config.providers.values()].filter((p) => p.products.size > 0).map((p) => p.id);
}

/** The service's express app over `store` (Redis, or memory under `kubecrew dev`). */
export function createIntegrationsApp(
  config: IntegrationsConfig,
  store: IntegrationsStore,
  options: StartOptions = {},
): IntegrationsApp {
  const logger = options.logger ?? createLogger({ level: config.logLevel, name: "integrations" });
  const now = options.now ?? (() => new Date());
  const keys = redisKeys(config.redisKeyPrefix);
  const cipher = createTokenCipher(config.encryptionKey);
  const connections = createConnectionStore(store, keys, cipher, now);
  const signIns = createSignInStore(store, keys);
  const outbound = createOutboundClient(config.outbound);
  // Spans of the provider calls (no-ops without tracing): the token endpoints' and the SDKs' that take a fetch.
  const fetch = tracedFetch(outbound.fetch);
  const clients = createOAuthClients(fetch);
  const signIn = createSignIn({ config, signIns, connections, clients, logger, now });
  const accessTokens = createAccessTokens({ config, store, keys, connections, clients, logger, now });
  const revocations = createAppCredentialRevocations(store, keys, now);
  const toolCalls = tracedAppToolCalls(
    createAppToolCalls({ config, connections, accessTokens, signIn, fetch, dispatcher: outbound.dispatcher, logger }),
  );

  const app = express();
  app.disable("x-powered-by");
  app.use(requestSpans());
  app.use((req, res, next) => {
    const started = performance.now();
    // The route pattern, not the URL: connect links carry a one-time session id and callbacks an authorization code.
    res.on("finish", () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      logger.info(
        {
          method: req.method,
          route: route ?? req.path,
          status: res.statusCode,
          ms: Math.round(performance.now() - started),
        },
        "Request",
      );
    });
    next();
  });
  app.use(express.json({ limit: "10mb", verify: refuseDeepJson }));
  const routers = [
    healthRoutes(store),
    documentRoutes(),
    browserRoutes(config, signIn, now),
    appsRoutes(config, revocations, toolCalls, now),
    internalApiRoutes(config, signIn, connections, accessTokens, now),
  ];
  const routes = routers.flatMap(registeredRoutes);
  for (const router of routers) app.use(refuseWrongMethods(router));
  app.use((req, res) => {
    res.status(404).json({ error: "Not Found", message: `No route for ${req.method} ${req.path}` });
  });
  app.use(errorHandler(logger));
  return { app, routes, close: () => outbound.close() };
}
