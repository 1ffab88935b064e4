import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { authConfigSchema } from "../api/auth/config.ts";
import { llmProvider } from "../core/crew.ts";
import { outboundEnvSchema } from "../core/outbound/config.ts";
import { localPolicy } from "../core/outbound/policy.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

export const devConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("127.0.0.1"),
  KUBECREW_CREWS_DIR: z.string().default(`${repoRoot}examples`),
  KUBECREW_DEFAULT_CREW: z.string().optional(),
  KUBECREW_DEV_ORG_TOKEN: z.string().min(16).optional(),
  KUBECREW_DEV_USER_TOKEN: z.string().min(16).optional(),
  KUBECREW_LLM_PROVIDER: llmProvider.optional(),
  KUBECREW_LLM_MODEL: z.string().optional(),
  KUBECREW_LLM_BASE_URL: z.string().url().optional(),
  /** Task processes run at once; more wait (running, progress 0). Default: one per CPU. */
  KUBECREW_DEV_MAX_TASKS: z.coerce.number().int().min(1).default(availableParallelism()),
  KUBECREW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Tokens, clients and rate limits in Redis when set; in memory otherwise. */
  REDIS_URL: z.string().optional(),
  ...authConfigSchema.shape,
  ...outboundEnvSchema(localPolicy),
});
export type DevConfig = z.infer<typeof devConfigSchema>;

export { repoRoot };
