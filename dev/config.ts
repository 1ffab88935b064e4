import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { authFields } from "../api/auth/config.ts";
import { servingFields } from "../api/config.ts";
import { consoleFields } from "../console/config.ts";
import { configSchema, derived, logLevel, variable } from "../core/config.ts";
import { llmProvider } from "../core/crew.ts";
import {
  appsFields,
  appsSettingsOf,
  integrationsUrlFrom,
  type AppsSettings,
  type AppsValues,
} from "../core/execution-apps.ts";
import { outboundFields } from "../core/outbound/config.ts";
import { localPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { embeddedIntegrationsFrom, type EmbeddedIntegrationsSettings } from "./embedded-integrations-config.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

const port = variable(
  "PORT",
  z.coerce.number().int().min(0).max(65535).default(8080).describe("The port the server listens on."),
);
const outbound = outboundFields(localPolicy);

/**
 * `kubecrew dev`: its configuration, each field beside the variable it is read from (the one source of
 * docs/configuration.md).
 */
const devFields = {
  host: variable("HOST", z.string().default("127.0.0.1").describe("The address the server listens on.")),
  port,
  crewsDir: variable(
    "KUBECREW_CREWS_DIR",
    z
      .string()
      .default(`${repoRoot}examples`)
      .meta({ description: "The folder of crew (and Flow) manifests served.", defaultText: "the examples/ folder" }),
  ),
  mockFeedbackSeconds: variable(
    "KUBECREW_MOCK_FEEDBACK_SECONDS",
    z.coerce
      .number()
      .int()
      .min(0)
      .default(30)
      .describe(
        "On the mock provider, seconds a Flow's human_feedback waits for a person before the mock answers its first outcome; 0: never.",
      ),
  ),
  maxTasks: variable(
    "KUBECREW_DEV_MAX_TASKS",
    z.coerce.number().int().min(1).default(availableParallelism()).meta({
      description: "Task processes run at once, across executions; more wait (running, progress 0).",
      defaultText: "one per CPU",
    }),
  ),
  defaultCrew: variable(
    "KUBECREW_DEFAULT_CREW",
    z
      .string()
      .optional()
      .describe("The crew served at the root paths (`/kickoff`, `/inputs`, …) besides `/crews/<crew>/…`."),
  ),
  orgToken: variable(
    "KUBECREW_DEV_ORG_TOKEN",
    z
      .string()
      .min(16)
      .optional()
      .meta({ description: "The org token printed and accepted (16 characters or more).", defaultText: "random" }),
  ),
  userToken: variable(
    "KUBECREW_DEV_USER_TOKEN",
    z
      .string()
      .min(16)
      .optional()
      .meta({ description: "The user token printed and accepted (16 characters or more).", defaultText: "random" }),
  ),
  llm: {
    provider: variable(
      "KUBECREW_LLM_PROVIDER",
      llmProvider
        .optional()
        .describe("The LLM provider of crews that name none (openai, anthropic, openai-compatible, local, mock)."),
    ),
    model: variable("KUBECREW_LLM_MODEL", z.string().optional().describe("The model of crews that name none.")),
    baseURL: variable(
      "KUBECREW_LLM_BASE_URL",
      z.string().url().optional().describe("The provider's base URL for crews that name none."),
    ),
  },
  ...servingFields,
  logLevel: variable("LOG_LEVEL", logLevel),
  redisUrl: variable(
    "KUBECREW_REDIS_URL",
    z.string().optional().describe("Tokens, clients and rate limits in this Redis when set; in memory otherwise."),
  ),
  auth: authFields,
  console: consoleFields,
  outbound,
  connectedApps: derived({ ...appsFields, port, outbound }, appsConfigFrom),
};

/**
 * The environment to kubecrew dev's configuration, parsed once at start-up (parseConfig). The embedded integrations
 * service reads variables of its own (the providers' KUBECREW_<PROVIDER>_CLIENT_ID and the like) from the whole environment.
 */
export const devConfigSchema = configSchema(devFields).transform(({ connectedApps, ...config }) => ({
  ...config,
  ...connectedApps,
}));

/** What kubecrew dev runs with: the schema's type. */
export type DevConfig = z.infer<typeof devConfigSchema>;

/**
 * Connected apps: credentials minted in process for crews that declare apps (KUBECREW_APPS_URL set); the integrations
 * service (connections, revocation) when its URL and internal API key are set; else the one run in this process at
 * /oauthsvc, its variables as `kubecrew integrations` reads them, the secrets not given generated.
 */
function appsConfigFrom(
  e: AppsValues & { port: number; outbound: OutboundPolicy },
  env: Record<string, unknown>,
): {
  apps?: AppsSettings;
  integrations?: { url: string; internalApiKey: string };
  embeddedIntegrations?: EmbeddedIntegrationsSettings;
} {
  const apps = appsSettingsOf(e);
  const url = integrationsUrlFrom(e);
  if (!url) return { embeddedIntegrations: embeddedIntegrationsFrom(env, { port: e.port, outbound: e.outbound }) };
  return {
    ...(apps ? { apps } : {}),
    ...(e.internalApiKey ? { integrations: { url, internalApiKey: e.internalApiKey } } : {}),
  };
}

export { repoRoot };
