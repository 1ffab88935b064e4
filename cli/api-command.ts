import type { Command } from "commander";
import { configOrExit, parseConfig } from "../core/config.ts";
import { CrewApiClient } from "./api-client.ts";
import { resolveTarget, type TargetOptions } from "./api-target.ts";
import { clientConfigSchema, type ClientConfig } from "./client-config.ts";
import { CommandFailure } from "./command-failure.ts";
import { outputOption, type OutputFormat } from "./output-format.ts";

/** The options every command that calls the crew API takes. */
export interface ApiOptions extends TargetOptions {
  output: OutputFormat;
}

/** Adds --url, --token and -o/--output to a command. */
export function withApiOptions(command: Command): Command {
  return command
    .option("--url <url>", "the crew API (default: KUBECREW_URL, else the URL kubecrew login saved)")
    .option("--token <token>", "its bearer token (default: KUBECREW_TOKEN, else the token kubecrew login saved)")
    .addOption(outputOption());
}

/** The environment of the API commands, read once; a bad value stops the command with one line. */
export const loadClientConfig = (command: string): ClientConfig =>
  configOrExit(command, () => parseConfig(clientConfigSchema, process.env));

/**
 * Runs a command's action: a CommandFailure (the API refused, could not be reached, a wrong argument) is one line on
 * stderr, `kubecrew <command>: <what went wrong>`, and its exit status; the action's own result is the exit status.
 */
export async function reportFailures(command: string, action: () => Promise<number | void>): Promise<void> {
  try {
    process.exitCode = (await action()) ?? 0;
  } catch (err) {
    // Anything else is a defect of the CLI; still one line, not a stack trace.
    const message = err instanceof CommandFailure ? err.message : `unexpected error: ${(err as Error).message}`;
    process.stderr.write(`kubecrew ${command}: ${message}\n`);
    process.exitCode = err instanceof CommandFailure ? err.exitCode : 1;
  }
}

/** Runs an action with a client of the crew API that --url/--token, the environment or the saved login name. */
export async function withApiClient(
  command: string,
  options: TargetOptions,
  action: (client: CrewApiClient) => Promise<number | void>,
): Promise<void> {
  const config = loadClientConfig(command);
  await reportFailures(command, async () => {
    const client = new CrewApiClient(resolveTarget(options, config));
    try {
      return await action(client);
    } finally {
      await client.close();
    }
  });
}
