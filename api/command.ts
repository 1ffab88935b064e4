import type { Command } from "commander";
import { configOrExit, parseConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { exitIfCannotListen } from "../platform/http/listen-error.ts";
import { apiConfigSchema, type ApiConfig } from "./config.ts";
import { startMetricsServer } from "./metrics-server.ts";
import { startClusterApi } from "./start-cluster-api.ts";
import { startTracing } from "../platform/telemetry/tracing.ts";

/** `kubecrew api`: the crew API against the cluster (CrewExecutions) with tokens in Redis. */
export function registerApiCommand(program: Command): void {
  program
    .command("api")
    .description(
      "Serve the crew API in cluster mode: CrewExecutions in Kubernetes, tokens in Redis (KUBECREW_REDIS_URL)",
    )
    .action(async () => {
      const config: ApiConfig = configOrExit("api", () => parseConfig(apiConfigSchema, process.env));
      const log = createLogger({ level: config.logLevel, name: "api" });
      // The kickoff's span roots each execution's trace (OTEL_* variables; nothing at all when none is set).
      const tracing = configOrExit("api", () => startTracing({ env: process.env, serviceName: "kubecrew-api" }));
      const api = await exitIfCannotListen("api", { host: "HOST", port: "PORT" }, () => startClusterApi(config, log));
      // Prometheus scrapes its own port, which no Ingress exposes.
      const metricsVariables = { host: "KUBECREW_API_METRICS_HOST", port: "KUBECREW_API_METRICS_PORT" };
      const metrics = await exitIfCannotListen("api", metricsVariables, () =>
        startMetricsServer({ ...config.metrics, registry: api.metrics.registry }),
      );
      log.info(
        { url: api.url, metrics: metrics.url, namespace: config.namespace, defaultCrew: config.defaultCrew },
        "Crew API listening",
      );
      const shutdown = async (signal: string) => {
        log.info({ signal }, "Shutting down");
        await api.stop();
        await metrics.stop();
        await tracing.stop();
        process.exit(0);
      };
      process.once("SIGTERM", () => void shutdown("SIGTERM"));
      process.once("SIGINT", () => void shutdown("SIGINT"));
    });
}
