import { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../core/logger.ts";
import { createConsole } from "../console/console.ts";
import { createOutboundClient } from "../core/outbound/outbound-fetch.ts";
import { createRedisAuth } from "./auth/api-auth.ts";
import { IntegrationsClient } from "./connections/integrations-client.ts";
import { connectRedis, redisAnswers } from "../core/redis-client.ts";
import type { ApiConfig } from "./config.ts";
import { createKubernetesBackend } from "./kubernetes-backend.ts";
import { startApi, type RunningServer } from "./server.ts";

/**
 * The crew API in cluster mode: executions are CrewExecutions read through informer caches, tokens live in Redis,
 * and the token endpoint and the admin API are mounted beside the crew routes.
 */
export async function startClusterApi(
  config: ApiConfig,
  log: Logger,
  kubeConfig: KubeConfig = defaultKubeConfig(),
): Promise<RunningServer> {
  const backend = await createKubernetesBackend({ kubeConfig, namespace: config.namespace, log });
  const redis = connectRedis(config.redisUrl, { log, commandTimeoutMs: config.auth.redisCommandTimeoutMs });
  const webConsole = createConsole(
    { ...config.console, ...(config.auth.adminKey ? { adminKey: config.auth.adminKey } : {}) },
    log,
  );
  const auth = createRedisAuth({ redis, config: config.auth, log, sessions: webConsole.sessions });
  // /connections calls the integrations service inside the cluster: the API's outbound policy applies.
  const outbound = config.integrations ? createOutboundClient(config.outbound) : undefined;
  const server = await startApi({
    backend,
    ...(config.integrations && outbound
      ? { integrations: new IntegrationsClient(config.integrations, outbound.fetch) }
      : {}),
    console: webConsole,
    tokens: auth.tokens,
    extraRouters: auth.routers,
    extraPaths: auth.paths,
    log,
    bodyLimitBytes: config.bodyLimitBytes,
    ready: () => redisAnswers(redis),
    outboundPolicy: config.outbound,
    trustProxy: config.trustProxy,
    host: config.host,
    port: config.port,
    ...(config.defaultCrew ? { defaultCrew: config.defaultCrew } : {}),
  });
  return {
    url: server.url,
    async stop() {
      await server.stop();
      await outbound?.close();
      await backend.stop();
      redis.disconnect();
    },
  };
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}
