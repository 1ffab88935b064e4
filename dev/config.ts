import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { llmPricesEnv, type LlmPrices } from "../core/usage.ts";
import { authConfigFrom, authEnv } from "../api/auth/config.ts";
import { consoleEnv, consoleSettingsFrom } from "../console/config.ts";
import { logLevel } from "../core/config.ts";
import { llmProvider } from "../core/crew.ts";
import { appsEnv, appsSettingsFrom, integrationsUrlFrom, type AppsSettings } from "../core/execution-apps.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { localPolicy } from "../core/outbound/policy.ts";
import { embeddedIntegrationsFrom, type EmbeddedIntegrationsSettings } from "./embedded-integrations-config.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/** `kubecrew dev`: the environment it reads, each variable described here (the one source of docs/configuration.md). */
export const devEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080).describe("The port the server listens on."),
  HOST: z.string().default("127.0.0.1").describe("The address the server listens on."),
  KUBECREW_CREWS_DIR: z
    .string()
    .default(`${repoRoot}examples`)
    .meta({ description: "The folder of crew (and Flow) manifests served.", defaultText: "the examples/ folder" }),
  KUBECREW_DEFAULT_CREW: z
    .string()
    .optional()
    .describe("The crew served at the root paths (`/kickoff`, `/inputs`, …) besides `/crews/<crew>/…`."),
  KUBECREW_DEV_ORG_TOKEN: z
    .string()
    .min(16)
    .optional()
    .meta({ description: "The org token printed and accepted (16 characters or more).", defaultText: "random" }),
  KUBECREW_DEV_USER_TOKEN: z
    .string()
    .min(16)
    .optional()
    .meta({ description: "The user token printed and accepted (16 characters or more).", defaultText: "random" }),
  KUBECREW_LLM_PROVIDER: llmProvider
    .optional()
    .describe("The LLM provider of crews that name none (openai, anthropic, openai-compatible, local, mock)."),
  KUBECREW_LLM_MODEL: z.string().optional().describe("The model of crews that name none."),
  KUBECREW_LLM_BASE_URL: z.string().url().optional().describe("The provider's base URL for crews that name none."),
  KUBECREW_MOCK_FEEDBACK_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30)
    .describe(
      "On the mock provider, seconds a Flow's human_feedback waits for a person before the mock answers its first outcome; 0: never.",
    ),
  KUBECREW_DEV_MAX_TASKS: z.coerce.number().int().min(1).default(availableParallelism()).meta({
    description: "Task processes run at once, across executions; more wait (running, progress 0).",
    defaultText: "one per CPU",
  }),
  KUBECREW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe("The largest request body accepted; a larger one is refused with 413."),
  LOG_LEVEL: logLevel,
  KUBECREW_REDIS_URL: z
    .string()
    .optional()
    .describe("Tokens, clients and rate limits in this Redis when set; in memory otherwise."),
  ...authEnv.shape,
  ...consoleEnv.shape,
  ...outboundEnvSchema(localPolicy),
  ...appsEnv,
  KUBECREW_LLM_PRICES: llmPricesEnv.describe(
    'Model → US dollars per million input/output tokens, for `usage.cost_usd` (JSON: {"<model>": {"input": <usd>, "output": <usd>}}); empty: no cost.',
  ),
});

/**
 * The environment to kubecrew dev's configuration, parsed once at start-up (parseConfig). Loose: the embedded integrations service reads
 * variables of its own (the providers' <PROVIDER>_CLIENT_ID and the like).
 */
export const devConfigSchema = devEnv.loose().transform((e) => ({
  host: e.HOST,
  port: e.PORT,
  crewsDir: e.KUBECREW_CREWS_DIR,
  mockFeedbackSeconds: e.KUBECREW_MOCK_FEEDBACK_SECONDS,
  maxTasks: e.KUBECREW_DEV_MAX_TASKS,
  ...(e.KUBECREW_DEFAULT_CREW ? { defaultCrew: e.KUBECREW_DEFAULT_CREW } : {}),
  ...(e.KUBECREW_DEV_ORG_TOKEN ? { orgToken: e.KUBECREW_DEV_ORG_TOKEN } : {}),
  ...(e.KUBECREW_DEV_USER_TOKEN ? { userToken: e.KUBECREW_DEV_USER_TOKEN } : {}),
  llm: {
    ...(e.KUBECREW_LLM_PROVIDER ? { provider: e.KUBECREW_LLM_PROVIDER } : {}),
    ...(e.KUBECREW_LLM_MODEL ? { model: e.KUBECREW_LLM_MODEL } : {}),
    ...(e.KUBECREW_LLM_BASE_URL ? { baseURL: e.KUBECREW_LLM_BASE_URL } : {}),
  },
  bodyLimitBytes: e.KUBECREW_BODY_LIMIT_BYTES,
  prices: e.KUBECREW_LLM_PRICES satisfies LlmPrices,
  logLevel: e.LOG_LEVEL,
  ...(e.KUBECREW_REDIS_URL ? { redisUrl: e.KUBECREW_REDIS_URL } : {}),
  auth: authConfigFrom(e),
  console: consoleSettingsFrom(e),
  outbound: outboundPolicyFrom(e),
  ...appsConfigFrom(e),
}));

/** What kubecrew dev runs with: the schema's type. */
export type DevConfig = z.infer<typeof devConfigSchema>;

/**
 * Connected apps: credentials minted in process for crews that declare apps (KUBECREW_APPS_URL set); the integrations
 * service (connections, revocation) when its URL and internal API key are set; else the one run in this process at
 * /oauthsvc, its variables as `kubecrew integrations` reads them, the secrets not given generated.
 */
function appsConfigFrom(e: z.infer<ReturnType<typeof devEnv.loose>>): {
  apps?: AppsSettings;
  integrations?: { url: string; internalApiKey: string };
  embeddedIntegrations?: EmbeddedIntegrationsSettings;
} {
  const apps = appsSettingsFrom(e);
  const url = integrationsUrlFrom(e);
  if (!url)
    return { embeddedIntegrations: embeddedIntegrationsFrom(e, { port: e.PORT, outbound: outboundPolicyFrom(e) }) };
  return {
    ...(apps ? { apps } : {}),
    ...(url && e.KUBECREW_OAUTH_INTERNAL_API_KEY
      ? { integrations: { url, internalApiKey: e.KUBECREW_OAUTH_INTERNAL_API_KEY } }
      : {}),
  };
}

export { repoRoot };
