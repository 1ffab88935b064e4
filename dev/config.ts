import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { authConfigFrom, authEnv, type AuthConfig } from "../api/auth/config.ts";
import { consoleEnv, consoleSettingsFrom, type ConsoleSettings } from "../console/config.ts";
import { logLevel, type LogLevel } from "../core/config.ts";
import { llmProvider, type LlmProvider } from "../core/crew.ts";
import { appsEnv, appsSettingsFrom, integrationsUrlFrom, type AppsSettings } from "../core/execution-apps.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { localPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { embeddedIntegrationsFrom, type EmbeddedIntegrationsSettings } from "./embedded-integrations-config.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/** `kubecrew dev`: the environment it reads. */
export const devEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("127.0.0.1"),
  KUBECREW_CREWS_DIR: z.string().default(`${repoRoot}examples`),
  KUBECREW_DEFAULT_CREW: z.string().optional(),
  KUBECREW_DEV_ORG_TOKEN: z.string().min(16).optional(),
  KUBECREW_DEV_USER_TOKEN: z.string().min(16).optional(),
  KUBECREW_LLM_PROVIDER: llmProvider.optional(),
  KUBECREW_LLM_MODEL: z.string().optional(),
  KUBECREW_LLM_BASE_URL: z.string().url().optional(),
  /** On the mock provider, seconds a flow's human_feedback waits before the mock answers its first outcome; 0: never. */
  KUBECREW_MOCK_FEEDBACK_SECONDS: z.coerce.number().int().min(0).default(30),
  /** Task processes run at once; more wait (running, progress 0). Default: one per CPU. */
  KUBECREW_DEV_MAX_TASKS: z.coerce.number().int().min(1).default(availableParallelism()),
  KUBECREW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  LOG_LEVEL: logLevel,
  /** Tokens, clients and rate limits in Redis when set; in memory otherwise. */
  KUBECREW_REDIS_URL: z.string().optional(),
  ...authEnv.shape,
  ...consoleEnv.shape,
  ...outboundEnvSchema(localPolicy),
  ...appsEnv,
});

export interface DevConfig {
  host: string;
  port: number;
  crewsDir: string;
  defaultCrew?: string;
  /** Task processes run at once, across executions; the others wait. */
  maxTasks: number;
  /** The tokens to print and accept (memory token store); random when not set. */
  orgToken?: string;
  userToken?: string;
  /** The model of crews that name none. */
  llm: { provider?: LlmProvider; model?: string; baseURL?: string };
  /** On the mock provider, how long a flow's human_feedback waits for a person before the mock answers (0: always). */
  mockFeedbackSeconds: number;
  bodyLimitBytes: number;
  logLevel: LogLevel;
  /** Tokens, clients and rate limits in Redis when set; in memory otherwise. */
  redisUrl?: string;
  auth: AuthConfig;
  /** The web console at /console/. */
  console: ConsoleSettings;
  /** Where webhooks may point (loopback allowed). */
  outbound: OutboundPolicy;
  /** Connected apps: credentials minted in process for crews that declare apps (KUBECREW_APPS_URL set). */
  apps?: AppsSettings;
  /** The integrations service (connections, revocation): its base URL and internal API key, when both are set. */
  integrations?: { url: string; internalApiKey: string };
  /**
   * The integrations service run in this process at /oauthsvc, when none is named elsewhere (KUBECREW_APPS_URL,
   * KUBECREW_INTEGRATIONS_URL): its variables as `kubecrew integrations` reads them, the secrets not given generated.
   */
  embeddedIntegrations?: EmbeddedIntegrationsSettings;
}

/**
 * The environment to DevConfig, parsed once at start-up (parseConfig). Loose: the embedded integrations service reads
 * variables of its own (the providers' <PROVIDER>_CLIENT_ID and the like).
 */
export const devConfigSchema = devEnv.loose().transform((e): DevConfig => ({
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
  logLevel: e.LOG_LEVEL,
  ...(e.KUBECREW_REDIS_URL ? { redisUrl: e.KUBECREW_REDIS_URL } : {}),
  auth: authConfigFrom(e),
  console: consoleSettingsFrom(e),
  outbound: outboundPolicyFrom(e),
  ...appsConfigFrom(e),
}));

function appsConfigFrom(
  e: z.infer<ReturnType<typeof devEnv.loose>>,
): Pick<DevConfig, "apps" | "integrations" | "embeddedIntegrations"> {
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
