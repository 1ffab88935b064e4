import type { Command } from "commander";
import { createLogger } from "../core/logger.ts";
import { exitIfCannotListen } from "../platform/http/listen-error.ts";
import { configOrExit } from "../core/config.ts";
import { controllerConfigFromEnv } from "./config.ts";
import { startController } from "./controller.ts";
import { startTracing } from "../platform/telemetry/tracing.ts";

/** `kubecrew controller`: runs CrewExecutions as Jobs; SIGTERM/SIGINT shut it down gracefully. */
export function registerControllerCommand(program: Command): void {
  program
    .command("controller")
    .description("Run the Kubernetes controller: CrewExecutions become Jobs, results become status")
    .action(async () => {
      const config = configOrExit("controller", () => controllerConfigFromEnv(process.env));
      const log = createLogger({ level: config.logLevel, name: "controller" });
      // Spans of Job starts and webhook deliveries (OTEL_* variables; nothing at all when none is set).
      const tracing = configOrExit("controller", () =>
        startTracing({ env: process.env, serviceName: "kubecrew-controller" }),
      );
      // The health and metrics port is the one server the controller listens with.
      const health = { host: "KUBECREW_HEALTH_HOST", port: "KUBECREW_HEALTH_PORT" };
      const controller = await exitIfCannotListen("controller", health, () =>
        startController(config, {
          log,
          onFatal: (reason) => {
            log.fatal({ reason }, "Controller cannot go on");
            process.exit(1);
          },
        }),
      );
      log.info(
        { health: controller.url, namespace: config.namespace || "(all)", identity: config.leaderElection.identity },
        "Controller started",
      );
      await new Promise<void>((resolve) => {
        const onSignal = (signal: NodeJS.Signals) => {
          log.info({ signal }, "Shutting down");
          resolve();
        };
        process.once("SIGTERM", onSignal);
        process.once("SIGINT", onSignal);
      });
      await controller.stop();
      await tracing.stop();
    });
}
