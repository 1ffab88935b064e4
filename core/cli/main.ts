#!/usr/bin/env node
import { Command } from "commander";
import { registerDevCommand } from "./dev-command.ts";
import { registerRunnerCommand } from "../../runner/command.ts";

/** The one `kubecrew` CLI; each component registers its own subcommand. */
const program = new Command("kubecrew")
  .description("Crew execution on Kubernetes")
  .version("0.1.0")
  .showHelpAfterError();

registerDevCommand(program);
registerRunnerCommand(program);

await program.parseAsync(process.argv);
