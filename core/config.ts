import type { z } from "zod";

/** A configuration mistake: the process prints this one line and exits. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Parses the environment once into a typed config; a bad value throws ConfigError naming the variable. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = issue.path.join(".") || "(environment)";
  throw new ConfigError(`Invalid configuration: ${name}: ${issue.message}`);
}
