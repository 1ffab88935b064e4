import { z } from "zod";
import { logLevel } from "../core/config.ts";
import { llmPricesEnv, type LlmPrices } from "../core/usage.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { consoleEnv, consoleSettingsFrom } from "../console/config.ts";
import { authConfigFrom, authEnv } from "./auth/config.ts";
import type { IntegrationsSettings } from "./connections/integrations-client.ts";

/**
 * `kubecrew api` (cluster mode): the environment it reads, each variable described here (the one source of
 * docs/configuration.md).
 */
export const apiEnv = authEnv.extend({
  HOST: z.string().default("0.0.0.0").describe("The address the server listens on."),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080).describe("The port the server listens on."),
  POD_NAMESPACE: z
    .string()
    .min(1)
    .default("default")
    .describe("The namespace whose Crews the API serves (the pod's own, through the Downward API)."),
  KUBECREW_DEFAULT_CREW: z
    .string()
    .optional()
    .describe("The crew served at the root paths (`/kickoff`, `/inputs`, …) besides `/crews/<crew>/…`."),
  KUBECREW_TRUST_PROXY: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("Proxies in front of the API (the Ingress controller) whose X-Forwarded-For is trusted; 0 trusts none."),
  KUBECREW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe("The largest request body accepted; a larger one is refused with 413."),
  KUBECREW_REDIS_URL: z
    .string()
    .min(1, "is required: bearer tokens live in Redis")
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .describe("The Redis holding tokens, clients and rate limits (redis:// or rediss://)."),
  ...consoleEnv.shape,
  LOG_LEVEL: logLevel,
  KUBECREW_INTEGRATIONS_URL: z
    .string()
    .url()
    .optional()
    .describe("The integrations service's base URL, for `/connections` (with KUBECREW_OAUTH_INTERNAL_API_KEY)."),
  KUBECREW_OAUTH_INTERNAL_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe("The integrations service's internal API key (never handed to task processes)."),
  ...outboundEnvSchema(clusterPolicy),
  KUBECREW_LLM_PRICES: llmPricesEnv.describe(
    'Model → US dollars per million input/output tokens, for `usage.cost_usd` (JSON: {"<model>": {"input": <usd>, "output": <usd>}}); empty: no cost.',
  ),
});

/** The environment to the API's configuration, parsed once at start-up (parseConfig). */
export const apiConfigSchema = apiEnv.transform((e) => ({
  host: e.HOST,
  port: e.PORT,
  /** The namespace whose Crews the API serves. */
  namespace: e.POD_NAMESPACE,
  ...(e.KUBECREW_DEFAULT_CREW ? { defaultCrew: e.KUBECREW_DEFAULT_CREW } : {}),
  trustProxy: e.KUBECREW_TRUST_PROXY,
  bodyLimitBytes: e.KUBECREW_BODY_LIMIT_BYTES,
  /** Prices of the models (KUBECREW_LLM_PRICES); empty: no `cost_usd`. */
  prices: e.KUBECREW_LLM_PRICES satisfies LlmPrices,
  redisUrl: e.KUBECREW_REDIS_URL,
  logLevel: e.LOG_LEVEL,
  auth: authConfigFrom(e),
  /** The web console at /console/. */
  console: consoleSettingsFrom(e),
  /** Where webhooks may point. */
  outbound: outboundPolicyFrom(e),
  /** The integrations service's internal API (for /connections), when configured. */
  ...(e.KUBECREW_INTEGRATIONS_URL && e.KUBECREW_OAUTH_INTERNAL_API_KEY
    ? {
        integrations: {
          url: e.KUBECREW_INTEGRATIONS_URL,
          internalApiKey: e.KUBECREW_OAUTH_INTERNAL_API_KEY,
        } satisfies IntegrationsSettings,
      }
    : {}),
}));

/** What the API runs with: the schema's type. */
export type ApiConfig = z.infer<typeof apiConfigSchema>;
