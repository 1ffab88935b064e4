import type { Logger } from "../core/logger.ts";
import { createConsole } from "../console/console.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { AdminKeyGuesses } from "./auth/admin-key-guesses.ts";
import { createRedisAuth } from "./auth/api-auth.ts";
import { IntegrationsClient } from "./connections/integrations-client.ts";
import { connectRedis, redisAnswers } from "../platform/redis-client.ts";
import type { ApiConfig } from "./config.ts";
import { createKubernetesBackend } from "./kubernetes-backend.ts";
import { createKubernetesFlows } from "./kubernetes-flows.ts";
import { Kubeconfig, type KubeAccess } from "../kube/runtime/kubeconfig.ts";
import { startApi, type RunningServer } from "./server.ts";
import { apiMetrics } from "./app.ts";
import type { ApiMetrics } from "./metrics.ts";

/**
 * The crew API in cluster mode: executions are CrewExecutions read through informer caches, tokens live in Redis,
 * and the token endpoint and the admin API are mounted beside the crew routes. Its requests are counted into
 * `metrics`, which `kubecrew api` serves on a port of its own.
 */
export async function startClusterApi(
  config: ApiConfig,
  log: Logger,
  kubeConfig: KubeAccess = Kubeconfig.fromDefault(),
): Promise<RunningServer & { metrics: ApiMetrics }> {
  const metrics = apiMetrics();
  const backend = await createKubernetesBackend({ kubeConfig, namespace: config.namespace, log });
  const flows = await createKubernetesFlows({
    kubeConfig,
    namespace: config.namespace,
    log,
    results: backend.caches.results,
  });
  const redis = connectRedis(config.redisUrl, {
    log,
    commandTimeoutMs: config.auth.redisCommandTimeoutMs,
    autoPipelining: true,
  });
  // The console's OpenID provider and /connections' integrations service are reached through the API's outbound
  // URL policy, as every other call.
  const outbound = createOutboundClient(config.outbound);
  // Wrong admin keys are counted across replicas, whether sent to the admin API or the console's sign-in.
  const adminKeyGuesses = AdminKeyGuesses.redis(redis, config.auth.adminKeyGuesses, config.auth.redisKeyPrefix);
  const webConsole = createConsole(
    {
      ...config.console,
      ...(config.auth.adminKey ? { adminKey: config.auth.adminKey } : {}),
      adminKeyGuesses,
      fetch: outbound.fetch,
    },
    log,
  );
  const auth = createRedisAuth({ redis, config: config.auth, log, sessions: webConsole.sessions, adminKeyGuesses });
  const server = await startApi({
    backend,
    flows,
    ...(config.integrations ? { integrations: new IntegrationsClient(config.integrations, outbound.fetch) } : {}),
    console: webConsole,
    tokens: auth.tokens,
    extraRouters: auth.routers,
    extraPaths: auth.paths,
    log,
    bodyLimitBytes: config.bodyLimitBytes,
    prices: config.prices,
    ready: () => redisAnswers(redis),
    metrics,
    outboundPolicy: config.outbound,
    trustProxy: config.trustProxy,
    host: config.host,
    port: config.port,
    ...(config.defaultCrew ? { defaultCrew: config.defaultCrew } : {}),
  });
  return {
    url: server.url,
    metrics,
    async stop() {
      await server.stop();
      await backend.stop();
      await flows.close();
      auth.close();
      redis.disconnect();
      await outbound.close();
    },
  };
}
