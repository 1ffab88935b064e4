import { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../core/logger.ts";
import { outboundPolicyFrom } from "../core/outbound/config.ts";
import { createRedisAuth } from "./auth/api-auth.ts";
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
  const backend = await createKubernetesBackend({ kubeConfig, namespace: config.POD_NAMESPACE, log });
  const redis = connectRedis(config.REDIS_URL, { log, commandTimeoutMs: config.KUBECREW_REDIS_COMMAND_TIMEOUT_MS });
  const auth = createRedisAuth({ redis, config, log });
  const server = await startApi({
    backend,
    tokens: auth.tokens,
    extraRouters: auth.routers,
    extraPaths: auth.paths,
    log,
    bodyLimitBytes: config.KUBECREW_BODY_LIMIT_BYTES,
    ready: () => redisAnswers(redis),
    outboundPolicy: outboundPolicyFrom(config),
    trustProxy: config.KUBECREW_TRUST_PROXY,
    host: config.HOST,
    port: config.PORT,
    ...(config.KUBECREW_DEFAULT_CREW ? { defaultCrew: config.KUBECREW_DEFAULT_CREW } : {}),
  });
  return {
    url: server.url,
    async stop() {
      await server.stop();
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
