import { z } from "zod";
import { logLevel, type LogLevel } from "../core/config.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { clusterPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { consoleEnv, consoleSettingsFrom, type ConsoleSettings } from "../console/config.ts";
import { authConfigFrom, authEnv, type AuthConfig } from "./auth/config.ts";
import type { IntegrationsSettings } from "./connections/integrations-client.ts";

/** `kubecrew api` (cluster mode): the environment it reads. */
export const apiEnv = authEnv.extend({
  HOST: z.string().default("0.0.0.0"),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** The namespace whose Crews the API serves (the pod's own, through the downward API). */
  POD_NAMESPACE: z.string().min(1).default("default"),
  KUBECREW_DEFAULT_CREW: z.string().optional(),
  /** Proxies in front of the API (the Ingress controller) whose X-Forwarded-For is trusted; 0 trusts none. */
  KUBECREW_TRUST_PROXY: z.coerce.number().int().min(0).default(0),
  KUBECREW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  KUBECREW_REDIS_URL: z
    .string()
    .min(1, "is required: bearer tokens live in Redis")
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL"),
  ...consoleEnv.shape,
  LOG_LEVEL: logLevel,
  /** The integrations service's internal API, for /connections (both needed). */
  KUBECREW_INTEGRATIONS_URL: z.string().url().optional(),
  KUBECREW_OAUTH_INTERNAL_API_KEY: z.string().min(1).optional(),
  ...outboundEnvSchema(clusterPolicy),
});

export interface ApiConfig {
  host: string;
  port: number;
  /** The namespace whose Crews the API serves. */
  namespace: string;
  defaultCrew?: string;
  trustProxy: number;
  bodyLimitBytes: number;
  redisUrl: string;
  logLevel: LogLevel;
  auth: AuthConfig;
  /** The web console at /console/. */
  console: ConsoleSettings;
  /** Where webhooks may point. */
  outbound: OutboundPolicy;
  /** The integrations service's internal API (for /connections), when configured. */
  integrations?: IntegrationsSettings;
}

/** The environment to ApiConfig, parsed once at start-up (parseConfig). */
export const apiConfigSchema = apiEnv.transform((e): ApiConfig => ({
  host: e.HOST,
  port: e.PORT,
  namespace: e.POD_NAMESPACE,
  ...(e.KUBECREW_DEFAULT_CREW ? { defaultCrew: e.KUBECREW_DEFAULT_CREW } : {}),
  trustProxy: e.KUBECREW_TRUST_PROXY,
  bodyLimitBytes: e.KUBECREW_BODY_LIMIT_BYTES,
  redisUrl: e.KUBECREW_REDIS_URL,
  logLevel: e.LOG_LEVEL,
  auth: authConfigFrom(e),
  console: consoleSettingsFrom(e),
  outbound: outboundPolicyFrom(e),
  ...(e.KUBECREW_INTEGRATIONS_URL && e.KUBECREW_OAUTH_INTERNAL_API_KEY
    ? { integrations: { url: e.KUBECREW_INTEGRATIONS_URL, internalApiKey: e.KUBECREW_OAUTH_INTERNAL_API_KEY } }
    : {}),
}));
