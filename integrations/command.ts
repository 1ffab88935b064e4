import type { Command } from "commander";
import { configOrExit } from "../core/config.ts";
import { loadConfig } from "./config.ts";
import { start } from "./server.ts";
import { exitIfCannotListen } from "../platform/http/listen-error.ts";
import { startTracing } from "../platform/telemetry/tracing.ts";

/** `kubecrew integrations`: the OAuth integrations service (port 8787 unless KUBECREW_INTEGRATIONS_PORT or PORT says otherwise). */
export function registerIntegrationsCommand(program: Command): void {
  program
    .command("integrations")
    .description("Run the integrations service: third-party OAuth sign-in and the encrypted provider token store")
    .action(async () => {
      const config = configOrExit("integrations", () => loadConfig(process.env));
      // The standard OTEL_* variables: no exporter and no connection when no endpoint is set.
      const tracing = configOrExit("integrations", () =>
        startTracing({ env: process.env, serviceName: "kubecrew-integrations" }),
      );
      // The port comes from KUBECREW_INTEGRATIONS_PORT, else PORT, else 8787: the line names the one to change.
      const port =
        process.env["KUBECREW_INTEGRATIONS_PORT"] || !process.env["PORT"] ? "KUBECREW_INTEGRATIONS_PORT" : "PORT";
      const service = await exitIfCannotListen("integrations", { host: "KUBECREW_INTEGRATIONS_HOST", port }, () =>
        start(config),
      );
      const shutdown = () => {
        void service
          .stop()
          .then(() => tracing.stop())
          .then(() => process.exit(0));
      };
      process.once("SIGTERM", shutdown);
      process.once("SIGINT", shutdown);
    });
}
