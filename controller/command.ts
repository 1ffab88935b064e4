import type { Command } from "commander";
import { createLogger } from "../core/logger.ts";
import { exitIfPortInUse } from "../core/port-in-use.ts";
import { configOrExit } from "../core/config.ts";
import { controllerConfigFromEnv } from "./config.ts";
import { startController } from "./controller.ts";

/** `kubecrew controller`: runs CrewExecutions as Jobs; SIGTERM/SIGINT shut it down gracefully. */
export function registerControllerCommand(program: Command): void {
  program
    .command("controller")
    .description("Run the Kubernetes controller: CrewExecutions become Jobs, results become status")
    .action(async () => {
      const config = configOrExit("controller", () => controllerConfigFromEnv(process.env));
      const log = createLogger({ level: config.logLevel, name: "controller" });
      const controller = await exitIfPortInUse("controller", "KUBECREW_HEALTH_PORT", () =>
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
    });
}
