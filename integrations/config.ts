import { z } from "zod";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { ConfigError, logLevel, parseConfig } from "../core/config.ts";
import { resolveProviderSettings } from "./provider-settings.ts";
import { REDIS_COMMAND_TIMEOUT_MS } from "../platform/redis-client.ts";
import { loadAppsSettings } from "./apps/apps-settings.ts";
import { isAllowedReturnUrl } from "./return-url.ts";

type Env = Record<string, string | undefined>;

const hex64 = /^[0-9a-fA-F]{64}$/;

/**
 * `kubecrew integrations`: the environment it reads, each variable described here (the one source of
 * docs/configuration.md). The providers' credentials and endpoints (provider-settings.ts) and the apps' settings
 * (apps/apps-settings.ts) are read by their own modules.
 */
export const integrationsEnv = z.object({
  KUBECREW_INTEGRATIONS_HOST: z.string().min(1).default("0.0.0.0").describe("The address the service listens on."),
  KUBECREW_INTEGRATIONS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .meta({ description: "The port the service listens on.", defaultText: "PORT, else 8787" }),
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe("The port the service listens on when KUBECREW_INTEGRATIONS_PORT is not set."),
  KUBECREW_OAUTH_PUBLIC_URL: z
    .url({
      protocol: /^https?$/,
      error: "must be an absolute http(s) URL, e.g. https://app.example.com/oauthsvc",
    })
    .describe(
      "Where browsers reach the service, e.g. https://app.example.com/oauthsvc; redirect URIs are built from it (required).",
    ),
  KUBECREW_REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" })
    .default("redis://127.0.0.1:6379")
    .describe("The Redis holding connections (encrypted tokens) and sign-in sessions."),
  KUBECREW_REDIS_COMMAND_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(REDIS_COMMAND_TIMEOUT_MS)
    .describe("A Redis command slower than this fails the request with 503 instead of hanging it."),
  KUBECREW_OAUTH_REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]*$/)
    .default("kubecrew:integrations:")
    .describe("The prefix of the service's Redis keys, so several deployments can share one Redis."),
  KUBECREW_OAUTH_COOKIE_SECRET: z
    .string({ error: "is required" })
    .min(32, "must be at least 32 characters")
    .describe("Signs the sign-in cookies (required, at least 32 characters)."),
  KUBECREW_OAUTH_DB_ENCRYPTION_KEY: z
    .string({ error: "is required (64 hexadecimal characters; generate one with `openssl rand -hex 32`)" })
    .regex(hex64, "must be exactly 64 hexadecimal characters (generate one with `openssl rand -hex 32`)")
    .describe("Encrypts the provider tokens at rest: 64 hexadecimal characters, `openssl rand -hex 32` (required)."),
  KUBECREW_OAUTH_INTERNAL_API_KEY: z
    .string({ error: "is required" })
    .min(32, "must be at least 32 characters")
    .describe("The key the crew API and the controller call the internal API with (required, at least 32 characters)."),
  KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS: z
    .string()
    .default("")
    .describe(
      "Comma-separated hosts (host or host:port) a sign-in may return the browser to; the public URL's host always may.",
    ),
  KUBECREW_OAUTH_REFRESH_AHEAD_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(300)
    .describe("An access token expiring within this many seconds is refreshed before it is handed out."),
  KUBECREW_OAUTH_CONNECT_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(30)
    .max(86_400)
    .default(600)
    .describe("How long a user has to finish connecting an app."),
  LOG_LEVEL: logLevel,
  ...outboundEnvSchema(clusterPolicy),
});

function hostList(raw: string): string[] {
  return raw
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * The environment to the service's configuration. The providers' and the apps' settings are read from the whole
 * environment (`env`): their variables are named after each provider.
 */
const integrationsConfigSchema = (env: Env) =>
  integrationsEnv.transform((e) => {
    const publicUrl = new URL(e.KUBECREW_OAUTH_PUBLIC_URL.replace(/\/+$/, ""));
    if (publicUrl.search || publicUrl.hash)
      throw new ConfigError("KUBECREW_OAUTH_PUBLIC_URL", "must not carry a query or fragment");
    /** Hosts a sign-in may return the browser to; the public URL's host is always allowed. */
    const allowedReturnHosts = [
      ...new Set([publicUrl.host.toLowerCase(), ...hostList(e.KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS)]),
    ];
    const apps = loadAppsSettings(env);
    if (apps.connectReturnUrl && !isAllowedReturnUrl(apps.connectReturnUrl, allowedReturnHosts))
      throw new ConfigError(
        "APPS_CONNECT_RETURN_URL",
        "must be on an allowed return host (KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS)",
      );
    return {
      host: e.KUBECREW_INTEGRATIONS_HOST,
      port: e.KUBECREW_INTEGRATIONS_PORT ?? e.PORT ?? 8787,
      /** Where browsers reach this service; redirect URIs are built from it. */
      publicUrl,
      redisUrl: e.KUBECREW_REDIS_URL,
      redisKeyPrefix: e.KUBECREW_OAUTH_REDIS_KEY_PREFIX,
      redisCommandTimeoutMs: e.KUBECREW_REDIS_COMMAND_TIMEOUT_MS,
      cookieSecret: e.KUBECREW_OAUTH_COOKIE_SECRET,
      encryptionKey: Buffer.from(e.KUBECREW_OAUTH_DB_ENCRYPTION_KEY, "hex"),
      internalApiKey: e.KUBECREW_OAUTH_INTERNAL_API_KEY,
      allowedReturnHosts,
      refreshAheadSeconds: e.KUBECREW_OAUTH_REFRESH_AHEAD_SECONDS,
      connectSessionTtlSeconds: e.KUBECREW_OAUTH_CONNECT_SESSION_TTL_SECONDS,
      logLevel: e.LOG_LEVEL,
      providers: resolveProviderSettings(env),
      /** Where provider calls (discovery, token, revocation, app actions) may go. */
      outbound: outboundPolicyFrom(e),
      /** Connected apps served as MCP at /v1/mcp (apps/apps-settings.ts). */
      apps,
    };
  });

/** Everything the integrations service needs: the schema's type. */
export type IntegrationsConfig = z.infer<ReturnType<typeof integrationsConfigSchema>>;

/** Parses the environment; a bad value throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: Env): IntegrationsConfig {
  return parseConfig(integrationsConfigSchema(env), env);
}
