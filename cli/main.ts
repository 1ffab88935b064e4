#!/usr/bin/env node
import { Command } from "commander";

/**
 * The one `kubecrew` CLI; each component registers its own subcommand. Only the module of the subcommand being run
 * is loaded (a runner in a Job pod never loads express or the controller), so every entry here is a lazy import.
 * To add a subcommand: one line `name: async (p) => (await import("…/command.ts")).registerXCommand(p)`.
 */
const commands: Record<string, (program: Command) => Promise<void>> = {
  api: async (p) => (await import("../api/command.ts")).registerApiCommand(p),
  dev: async (p) => (await import("./dev-command.ts")).registerDevCommand(p),
  runner: async (p) => (await import("../runner/command.ts")).registerRunnerCommand(p),
  controller: async (p) => (await import("../controller/command.ts")).registerControllerCommand(p),
  integrations: async (p) => (await import("../integrations/command.ts")).registerIntegrationsCommand(p),
  token: async (p) => (await import("./token-command.ts")).registerTokenCommand(p),
  client: async (p) => (await import("./client-command.ts")).registerClientCommand(p),
};

const program = new Command("kubecrew")
  .description("Crew execution on Kubernetes")
  .version("0.1.0")
  .showHelpAfterError();

const requested = process.argv[2];
const register = requested ? commands[requested] : undefined;
if (register) await register(program);
else for (const each of Object.values(commands)) await each(program);

await program.parseAsync(process.argv);
