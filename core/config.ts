import { z } from "zod";
import { KubecrewError } from "./errors.ts";

/**
 * The one configuration convention of every component: a zod schema over the environment, parsed once at start-up
 * into a camelCase object (parseConfig + a mapping); a bad value is a ConfigError naming the variable; the command
 * prints one line and exits with status 1 (configOrExit).
 */

/** A configuration mistake: the variable and what is wrong with it, as one line. */
export class ConfigError extends KubecrewError {
  override name = "ConfigError";
  readonly code = "invalid_configuration";
  readonly variable: string;

  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable}: ${problem}`);
    this.variable = variable;
  }
}

/** The log levels of every component (LOG_LEVEL, and the runner's level the controller hands its pods). */
export const logLevel = z
  .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
  .default("info")
  .describe("The log level: trace, debug, info, warn, error, fatal or silent.");
export type LogLevel = z.infer<typeof logLevel>;

/** Parses the environment once into a typed config; a bad value throws ConfigError naming the variable. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = issue.path.join(".") || "(environment)";
  // Zod's "expected string, received undefined" says nothing useful to an operator.
  const missing = issue.path.length === 1 && env[String(issue.path[0])] === undefined;
  const problem =
    !missing || issue.message.startsWith("is required")
      ? issue.message
      : issue.message.startsWith("Invalid input")
        ? "is required"
        : `is required and ${issue.message}`;
  throw new ConfigError(name, problem);
}

/**
 * The one way a command stops on a configuration mistake: `kubecrew <command>: <the ConfigError's line>` on stderr,
 * exit status 1. Any other error is thrown on.
 */
export function configOrExit<T>(command: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`kubecrew ${command}: ${err.message}\n`);
    process.exit(1);
  }
}
