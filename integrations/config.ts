import { z } from "zod";
import { outboundFields } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { configSchema, ConfigError, derived, logLevel, parseConfig, variable } from "../core/config.ts";
import { resolveProviderSettings } from "./provider-settings.ts";
import { REDIS_COMMAND_TIMEOUT_MS } from "../platform/redis-client.ts";
import { appsFields } from "./apps/apps-settings.ts";
import { isAllowedReturnUrl } from "./return-url.ts";

type Env = Record<string, string | undefined>;

const hex64 = /^[0-9a-fA-F]{64}$/;

const publicUrlVariable = variable(
  "KUBECREW_OAUTH_PUBLIC_URL",
  z
    .url({
      protocol: /^https?$/,
      error: "must be an absolute http(s) URL, e.g. https://app.example.com/oauthsvc",
    })
    .describe(
      "Where browsers reach the service, e.g. https://app.example.com/oauthsvc; redirect URIs are built from it (required).",
    ),
);

/**
 * `kubecrew integrations`: its configuration, each field beside the variable it is read from (the one source of
 * docs/configuration.md), the connected apps' among them (apps/apps-settings.ts). The providers' credentials and
 * endpoints (provider-settings.ts) are read by their own module from the whole environment: their variables are named
 * after each provider of the registry (`KUBECREW_<PROVIDER>_CLIENT_ID`).
 */
const integrationsFields = {
  host: variable(
    "KUBECREW_INTEGRATIONS_HOST",
    z.string().min(1).default("0.0.0.0").describe("The address the service listens on."),
  ),
  port: derived(
    {
      own: variable(
        "KUBECREW_INTEGRATIONS_PORT",
        z.coerce
          .number()
          .int()
          .min(0)
          .max(65535)
          .optional()
          .meta({ description: "The port the service listens on.", defaultText: "PORT, else 8787" }),
      ),
      fallback: variable(
        "PORT",
        z.coerce
          .number()
          .int()
          .min(0)
          .max(65535)
          .optional()
          .describe("The port the service listens on when KUBECREW_INTEGRATIONS_PORT is not set."),
      ),
    },
    (p) => p.own ?? p.fallback ?? 8787,
  ),
  /** Where browsers reach this service; redirect URIs are built from it. */
  publicUrl: publicUrlVariable,
  redisUrl: variable(
    "KUBECREW_REDIS_URL",
    z
      .url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" })
      .default("redis://127.0.0.1:6379")
      .describe("The Redis holding connections (encrypted tokens) and sign-in sessions."),
  ),
  redisKeyPrefix: variable(
    "KUBECREW_OAUTH_REDIS_KEY_PREFIX",
    z
      .string()
      .regex(/^[A-Za-z0-9:_-]*$/)
      .default("kubecrew:integrations:")
      .describe("The prefix of the service's Redis keys, so several deployments can share one Redis."),
  ),
  redisCommandTimeoutMs: variable(
    "KUBECREW_REDIS_COMMAND_TIMEOUT_MS",
    z.coerce
      .number()
      .int()
      .positive()
      .default(REDIS_COMMAND_TIMEOUT_MS)
      .describe("A Redis command slower than this fails the request with 503 instead of hanging it."),
  ),
  cookieSecret: variable(
    "KUBECREW_OAUTH_COOKIE_SECRET",
    z
      .string({ error: "is required" })
      .min(32, "must be at least 32 characters")
      .describe("Signs the sign-in cookies (required, at least 32 characters)."),
  ),
  encryptionKey: variable(
    "KUBECREW_OAUTH_DB_ENCRYPTION_KEY",
    z
      .string({ error: "is required (64 hexadecimal characters; generate one with `openssl rand -hex 32`)" })
      .regex(hex64, "must be exactly 64 hexadecimal characters (generate one with `openssl rand -hex 32`)")
      .transform((hex) => Buffer.from(hex, "hex"))
      .describe("Encrypts the provider tokens at rest: 64 hexadecimal characters, `openssl rand -hex 32` (required)."),
  ),
  internalApiKey: variable(
    "KUBECREW_OAUTH_INTERNAL_API_KEY",
    z
      .string({ error: "is required" })
      .min(32, "must be at least 32 characters")
      .describe(
        "The key the crew API and the controller call the internal API with (required, at least 32 characters).",
      ),
  ),
  /** Hosts a sign-in may return the browser to besides the public URL's (added by the schema's last step). */
  allowedReturnHosts: variable(
    "KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS",
    z
      .string()
      .default("")
      .transform(hostList)
      .describe(
        "Comma-separated hosts (host or host:port) a sign-in may return the browser to; the public URL's host always may.",
      ),
  ),
  refreshAheadSeconds: variable(
    "KUBECREW_OAUTH_REFRESH_AHEAD_SECONDS",
    z.coerce
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(300)
      .describe("An access token expiring within this many seconds is refreshed before it is handed out."),
  ),
  connectSessionTtlSeconds: variable(
    "KUBECREW_OAUTH_CONNECT_SESSION_TTL_SECONDS",
    z.coerce
      .number()
      .int()
      .min(30)
      .max(86_400)
      .default(600)
      .describe("How long a user has to finish connecting an app."),
  ),
  logLevel: variable("LOG_LEVEL", logLevel),
  providers: derived({}, (_, env) => resolveProviderSettings(env as Env)),
  /** Where provider calls (discovery, token, revocation, app actions) may go. */
  outbound: outboundFields(clusterPolicy),
  /** Connected apps served as MCP at /v1/mcp (apps/apps-settings.ts). */
  apps: appsFields,
};

function hostList(raw: string): string[] {
  return raw
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

/** The environment to the service's configuration, checked across variables. */
export const integrationsConfigSchema = configSchema(integrationsFields).transform((c) => {
  const publicUrl = new URL(c.publicUrl.replace(/\/+$/, ""));
  if (publicUrl.search || publicUrl.hash)
    throw new ConfigError(publicUrlVariable.name, "must not carry a query or fragment");
  const allowedReturnHosts = [...new Set([publicUrl.host.toLowerCase(), ...c.allowedReturnHosts])];
  if (c.apps.connectReturnUrl && !isAllowedReturnUrl(c.apps.connectReturnUrl, allowedReturnHosts))
    throw new ConfigError(
      appsFields.connectReturnUrl.name,
      "must be on an allowed return host (KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS)",
    );
  return { ...c, publicUrl, allowedReturnHosts };
});

/** Everything the integrations service needs: the schema's type. */
export type IntegrationsConfig = z.infer<typeof integrationsConfigSchema>;

/** Parses the environment; a bad value throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: Env): IntegrationsConfig {
  return parseConfig(integrationsConfigSchema, env);
}
