#!/usr/bin/env node
import { constants } from "node:os";
import { Command } from "commander";

/**
 * In a container the CLI is PID 1, and the kernel drops every signal PID 1 has no handler for. A SIGTERM that came
 * while a command was still starting (loading its modules, connecting), before it installs its own handler, was lost:
 * the pod ran on until SIGKILL at the end of its grace period, and a stopped task's runner went on working meanwhile.
 * So from the start SIGTERM and SIGINT end the process at once (exit 128 + the signal's number, as a shell reports a
 * process killed by it), unless a command handles the signal itself by then.
 */
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (process.listenerCount(signal) === 1) process.exit(128 + constants.signals[signal]);
  });
}

/**
 * The one `kubecrew` CLI; each component registers its own subcommand. Only the module of the subcommand being run
 * is loaded (a runner in a Job pod never loads express or the controller), so every entry here is a lazy import.
 * To add a subcommand: one line `name: async (p) => (await import("…/command.ts")).registerXCommand(p)`.
 */
const commands: Record<string, (program: Command) => Promise<void>> = {
  api: async (p) => (await import("../api/command.ts")).registerApiCommand(p),
  dev: async (p) => (await import("./dev-command.ts")).registerDevCommand(p),
  runner: async (p) => {
    // A crewai task's adapter loads CrewAI (seconds) while the runner loads its own modules.
    (await import("../runner/crewai-adapter-start.ts")).startAdapterEarly(process.argv, process.env);
    (await import("../runner/command.ts")).registerRunnerCommand(p);
  },
  controller: async (p) => (await import("../controller/command.ts")).registerControllerCommand(p),
  integrations: async (p) => (await import("../integrations/command.ts")).registerIntegrationsCommand(p),
  token: async (p) => (await import("./token-command.ts")).registerTokenCommand(p),
  client: async (p) => (await import("./client-command.ts")).registerClientCommand(p),
  run: async (p) => (await import("./run-command.ts")).registerRunCommand(p),
  status: async (p) => (await import("./status-command.ts")).registerStatusCommand(p),
  list: async (p) => (await import("./list-command.ts")).registerListCommand(p),
  logs: async (p) => (await import("./logs-command.ts")).registerLogsCommand(p),
  stop: async (p) => (await import("./stop-command.ts")).registerStopCommand(p),
  resume: async (p) => (await import("./resume-command.ts")).registerResumeCommand(p),
  login: async (p) => (await import("./login-command.ts")).registerLoginCommand(p),
  logout: async (p) => (await import("./logout-command.ts")).registerLogoutCommand(p),
  import: async (p) => (await import("./import-command.ts")).registerImportCommand(p),
  model: async (p) => (await import("./model-command.ts")).registerModelCommand(p),
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
