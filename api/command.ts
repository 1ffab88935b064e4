import type { Command } from "commander";
import { ConfigError, parseConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { exitIfPortInUse } from "../core/port-in-use.ts";
import { apiConfigSchema, type ApiConfig } from "./config.ts";
import { startClusterApi } from "./start-cluster-api.ts";

/** `kubecrew api`: the crew API against the cluster (CrewExecutions) with tokens in Redis. */
export function registerApiCommand(program: Command): void {
  program
    .command("api")
    .description("Serve the crew API in cluster mode: CrewExecutions in Kubernetes, tokens in Redis (REDIS_URL)")
    .action(async () => {
      let config: ApiConfig;
      try {
        config = parseConfig(apiConfigSchema, process.env);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        process.stderr.write(`${err.message}\n`);
        process.exit(1);
      }
      const log = createLogger({ level: config.LOG_LEVEL, name: "api" });
      const api = await exitIfPortInUse("api", "PORT", () => startClusterApi(config, log));
      log.info(
        { url: api.url, namespace: config.POD_NAMESPACE, defaultCrew: config.KUBECREW_DEFAULT_CREW },
        "Crew API listening",
      );
      const shutdown = async (signal: string) => {
        log.info({ signal }, "Shutting down");
        await api.stop();
        process.exit(0);
      };
      process.once("SIGTERM", () => void shutdown("SIGTERM"));
      process.once("SIGINT", () => void shutdown("SIGINT"));
    });
}
