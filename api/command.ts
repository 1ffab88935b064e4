import type { Command } from "commander";
import { configOrExit, parseConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { exitIfCannotListen } from "../platform/http/listen-error.ts";
import { apiConfigSchema, type ApiConfig } from "./config.ts";
import { startClusterApi } from "./start-cluster-api.ts";

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
      const api = await exitIfCannotListen("api", { host: "HOST", port: "PORT" }, () => startClusterApi(config, log));
      log.info({ url: api.url, namespace: config.namespace, defaultCrew: config.defaultCrew }, "Crew API listening");
      const shutdown = async (signal: string) => {
        log.info({ signal }, "Shutting down");
        await api.stop();
        process.exit(0);
      };
      process.once("SIGTERM", () => void shutdown("SIGTERM"));
      process.once("SIGINT", () => void shutdown("SIGINT"));
    });
}
