import { z } from "zod";

/** The web console's settings, from the environment; merged into `kubecrew api`'s and `kubecrew dev`'s schemas. */
export const consoleEnv = z.object({
  /** Signs the console's session cookies; every API replica needs the same one (32 characters or more). */
  KUBECREW_CONSOLE_SESSION_SECRET: z.string().min(32, "at least 32 characters").optional(),
  /** How long a console session lasts. */
  KUBECREW_CONSOLE_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 3600),
});

export interface ConsoleSettings {
  sessionSecret?: string;
  sessionTtlSeconds: number;
}

export function consoleSettingsFrom(e: z.infer<typeof consoleEnv>): ConsoleSettings {
  return {
    ...(e.KUBECREW_CONSOLE_SESSION_SECRET ? { sessionSecret: e.KUBECREW_CONSOLE_SESSION_SECRET } : {}),
    sessionTtlSeconds: e.KUBECREW_CONSOLE_SESSION_TTL_SECONDS,
  };
}
