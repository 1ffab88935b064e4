import { z } from "zod";
import { configSchema, derived, logLevel, variable } from "../core/config.ts";
import { llmPricesEnv } from "../core/usage.ts";
import { outboundFields } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { consoleFields } from "../console/config.ts";
import { authFields } from "./auth/config.ts";
import type { IntegrationsSettings } from "./connections/integrations-client.ts";

/**
 * `kubecrew api` (cluster mode): its configuration, each field beside the variable it is read from (the one source
 * of docs/configuration.md).
 */
/** How the API serves its requests — the embedded API of `kubecrew dev` reads them too. */
export const servingFields = {
  bodyLimitBytes: variable(
    "KUBECREW_BODY_LIMIT_BYTES",
    z.coerce
      .number()
      .int()
      .positive()
      .default(1024 * 1024)
      .describe("The largest request body accepted; a larger one is refused with 413."),
  ),
  /** Prices of the models; empty: no `cost_usd`. */
  prices: variable(
    "KUBECREW_LLM_PRICES",
    llmPricesEnv.describe(
      'Model → US dollars per million input/output tokens, for `usage.cost_usd` (JSON: {"<model>": {"input": <usd>, "output": <usd>}}); empty: no cost.',
    ),
  ),
};

const apiFields = {
  host: variable("HOST", z.string().default("0.0.0.0").describe("The address the server listens on.")),
  port: variable(
    "PORT",
    z.coerce.number().int().min(0).max(65535).default(8080).describe("The port the server listens on."),
  ),
  /** The namespace whose Crews the API serves. */
  namespace: variable(
    "POD_NAMESPACE",
    z
      .string()
      .min(1)
      .default("default")
      .describe("The namespace whose Crews the API serves (the pod's own, through the Downward API)."),
  ),
  defaultCrew: variable(
    "KUBECREW_DEFAULT_CREW",
    z
      .string()
      .optional()
      .describe("The crew served at the root paths (`/kickoff`, `/inputs`, …) besides `/crews/<crew>/…`."),
  ),
  /** The metrics server (`GET /metrics`), apart from the crew routes. */
  metrics: {
    host: variable(
      "KUBECREW_API_METRICS_HOST",
      z.string().default("0.0.0.0").describe("The address of the API's metrics server."),
    ),
    port: variable(
      "KUBECREW_API_METRICS_PORT",
      z.coerce
        .number()
        .int()
        .min(0)
        .max(65535)
        .default(8082)
        .describe("The port of the API's Prometheus metrics (`/metrics`), apart from the crew routes' port."),
    ),
  },
  trustProxy: variable(
    "KUBECREW_TRUST_PROXY",
    z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        "Proxies in front of the API (the Ingress controller) whose X-Forwarded-For is trusted; 0 trusts none.",
      ),
  ),
  ...servingFields,
  redisUrl: variable(
    "KUBECREW_REDIS_URL",
    z
      .string()
      .min(1, "is required: bearer tokens live in Redis")
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .describe("The Redis holding tokens, clients and rate limits (redis:// or rediss://)."),
  ),
  logLevel: variable("LOG_LEVEL", logLevel),
  auth: authFields,
  /** The web console at /console/. */
  console: consoleFields,
  /** Where webhooks may point. */
  outbound: outboundFields(clusterPolicy),
  /** The integrations service's internal API (for /connections), when configured. */
  integrations: derived(
    {
      url: variable(
        "KUBECREW_INTEGRATIONS_URL",
        z
          .string()
          .url()
          .optional()
          .describe("The integrations service's base URL, for `/connections` (with KUBECREW_OAUTH_INTERNAL_API_KEY)."),
      ),
      internalApiKey: variable(
        "KUBECREW_OAUTH_INTERNAL_API_KEY",
        z
          .string()
          .min(1)
          .optional()
          .describe("The integrations service's internal API key (never handed to task processes)."),
      ),
    },
    ({ url, internalApiKey }): IntegrationsSettings | undefined =>
      url && internalApiKey ? { url, internalApiKey } : undefined,
  ),
};

/** The environment to the API's configuration, parsed once at start-up (parseConfig); its shape is the variables. */
export const apiConfigSchema = configSchema(apiFields);

/** What the API runs with: the schema's type. */
export type ApiConfig = z.infer<typeof apiConfigSchema>;
