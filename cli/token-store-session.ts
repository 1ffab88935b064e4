import { Redis } from "ioredis";
import { z } from "zod";
import { configOrExit, configSchema, parseConfig, variable } from "../core/config.ts";
import { RedisTokenStore } from "../api/auth/redis-token-store.ts";
import { TokenStoreUnavailable, type ManagedTokenStore } from "../api/auth/token-store.ts";
import { CommandFailure } from "./command-failure.ts";

/** What the `token` and `client` commands read from the environment. */
export const adminCliConfigSchema = configSchema({
  redisUrl: variable(
    "KUBECREW_REDIS_URL",
    z
      .string({ error: "is required: the Redis that holds the API's tokens (redis://host:6379)" })
      .regex(/^rediss?:\/\//, "a redis:// or rediss:// URL")
      .describe("The Redis holding the API's tokens and clients (`kubecrew token`, `kubecrew client`)."),
  ),
  redisKeyPrefix: variable(
    "KUBECREW_REDIS_KEY_PREFIX",
    z.string().default("kubecrew:").describe("The prefix of the API's Redis keys, as the API has it."),
  ),
});

export { CommandFailure } from "./command-failure.ts";
export { table } from "./table.ts";

/**
 * Runs a management command against the token store in KUBECREW_REDIS_URL: a configuration mistake, an unreachable Redis or a
 * CommandFailure exits 1 with one line (the first naming the variable).
 */
export async function withTokenStore(
  command: string,
  env: NodeJS.ProcessEnv,
  action: (store: ManagedTokenStore) => Promise<void>,
): Promise<void> {
  const config = configOrExit(command, () => parseConfig(adminCliConfigSchema, env));
  // A short-lived client: one connection attempt, no retries, so an unreachable Redis is reported at once.
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  let connectionError: Error | undefined;
  redis.on("error", (err: Error) => {
    connectionError = err; // reported below, with the failed command
  });
  try {
    await redis.connect().catch((err: unknown) => {
      throw new TokenStoreUnavailable(err);
    });
    await action(new RedisTokenStore(redis, { prefix: config.redisKeyPrefix }));
  } catch (err) {
    if (err instanceof TokenStoreUnavailable) {
      const why = connectionError?.message ?? (err.cause as Error | undefined)?.message ?? "unknown error";
      console.error(`Cannot reach Redis (KUBECREW_REDIS_URL): ${why}`);
      process.exitCode = 1;
    } else if (err instanceof CommandFailure) {
      console.error(err.message);
      process.exitCode = 1;
    } else throw err;
  } finally {
    redis.disconnect();
  }
}

/** zod issues of a request body, in terms of the command's options. */
export function optionErrors(error: z.ZodError, optionOf: Record<string, string>): string {
  return error.issues
    .map((issue) => {
      const field = String(issue.path[0] ?? "");
      return `${optionOf[field] ?? field}: ${issue.message}`;
    })
    .join("; ");
}

export const crewsText = (crews: string[] | "*") => (crews === "*" ? "*" : crews.join(","));
