import type { Command } from "commander";
import { createLogger, type Logger } from "../core/logger.ts";
import type { TaskOutcome } from "../core/task-assignment.ts";
import { runnerConfigFromEnv, type RunnerConfig } from "./config.ts";
import { FileTaskIO, type TaskIO } from "./io.ts";
import { runTask } from "./run-task.ts";

export interface RunnerResult {
  /** 0 when the task succeeded, 1 otherwise. */
  exitCode: number;
  /** The one-line reason the task (or the runner) failed. */
  error?: string;
  outcome?: TaskOutcome;
}

/**
 * One runner's whole life: read the assignment, run the task, report the outcome. A task failure is reported like a
 * success (an outcome with `error`); only when the assignment cannot be read or the outcome cannot be written is
 * there no outcome.
 */
export async function runAssignedTask(
  io: TaskIO,
  options: { config: RunnerConfig; logger: Logger; signal?: AbortSignal },
): Promise<RunnerResult> {
  const { config, logger } = options;
  let outcome: TaskOutcome;
  try {
    const assignment = await io.readAssignment();
    outcome = await runTask(assignment, {
      env: config.env,
      retry: config.retry,
      attempt: config.attempt,
      signal: options.signal,
      logger,
    });
  } catch (error) {
    const message = (error as Error).message;
    logger.error({ err: error }, "Runner could not run the task");
    return { exitCode: 1, error: message };
  }
  try {
    await io.reportOutcome(outcome);
  } catch (error) {
    const message = `Cannot report the outcome: ${(error as Error).message}`;
    logger.error({ err: error }, "Runner could not report the outcome");
    return { exitCode: 1, error: message, outcome };
  }
  return outcome.error === undefined ? { exitCode: 0, outcome } : { exitCode: 1, error: outcome.error, outcome };
}

/** `kubecrew runner --assignment <file> --outcome <file>`: runs one task (what the embedded mode spawns). */
export function registerRunnerCommand(program: Command): void {
  program
    .command("runner")
    .description("Run one task of a crew execution and report its outcome (exit 0: task succeeded, 1: it failed)")
    .requiredOption("--assignment <path>", "JSON file with the task assignment")
    .requiredOption("--outcome <path>", "file the outcome is written to (JSON, replaced atomically)")
    .action(async (options: { assignment: string; outcome: string }) => {
      let config: RunnerConfig;
      try {
        config = runnerConfigFromEnv(process.env);
      } catch (error) {
        process.stderr.write(`${(error as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      const logger = createLogger({ level: config.logLevel, name: "runner" });
      const stop = new AbortController();
      const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(`Task interrupted by ${signal}`));
      process.once("SIGTERM", onSignal);
      process.once("SIGINT", onSignal);
      try {
        const io = new FileTaskIO({ assignment: options.assignment, outcome: options.outcome });
        const result = await runAssignedTask(io, { config, logger, signal: stop.signal });
        if (result.error !== undefined) process.stderr.write(`${result.error.replace(/\s*\n\s*/g, " ")}\n`);
        process.exitCode = result.exitCode;
      } finally {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
    });
}
