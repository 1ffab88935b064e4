import { z } from "zod";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { clusterPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { ConfigError, logLevel, parseConfig } from "../core/config.ts";
import { resolveProviderSettings, type ProviderSettings } from "./provider-settings.ts";
import { REDIS_COMMAND_TIMEOUT_MS } from "../platform/redis-client.ts";
import { loadAppsSettings, type AppsSettings } from "./apps/apps-settings.ts";
import { isAllowedReturnUrl } from "./return-url.ts";

/** Everything the integrations service needs, parsed once from the environment. */
export interface IntegrationsConfig {
  host: string;
  port: number;
  /** Where browsers reach this service, e.g. https://app.example.com/oauthsvc; redirect URIs are built from it. */
  publicUrl: URL;
  redisUrl: string;
  /** Redis key prefix, so several deployments (or test suites) can share one Redis. */
  redisKeyPrefix: string;
  /** A Redis command slower than this fails the request with 503 instead of hanging it. */
  redisCommandTimeoutMs: number;
  cookieSecret: string;
  encryptionKey: Buffer;
  internalApiKey: string;
  /** Hosts (host or host:port) a sign-in may return the browser to; the public URL's host is always allowed. */
  allowedReturnHosts: string[];
  /** An access token expiring within this many seconds is refreshed before it is handed out. */
  refreshAheadSeconds: number;
  connectSessionTtlSeconds: number;
  logLevel: string;
  providers: Map<string, ProviderSettings>;
  /** Where provider calls (discovery, token, revocation, app actions) may go. */
  outbound: OutboundPolicy;
  /** Connected apps served as MCP at /v1/mcp (apps/apps-settings.ts). */
  apps: AppsSettings;
}

type Env = Record<string, string | undefined>;

const hex64 = /^[0-9a-fA-F]{64}$/;

const envSchema = z.object({
  KUBECREW_INTEGRATIONS_HOST: z.string().min(1).default("0.0.0.0"),
  KUBECREW_INTEGRATIONS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).optional(),
  KUBECREW_OAUTH_PUBLIC_URL: z.url({
    protocol: /^https?$/,
    error: "must be an absolute http(s) URL, e.g. https://app.example.com/oauthsvc",
  }),
  KUBECREW_REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" })
    .default("redis://127.0.0.1:6379"),
  KUBECREW_REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().positive().default(REDIS_COMMAND_TIMEOUT_MS),
  KUBECREW_OAUTH_REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]*$/)
    .default("kubecrew:integrations:"),
  KUBECREW_OAUTH_COOKIE_SECRET: z.string({ error: "is required" }).min(32, "must be at least 32 characters"),
  KUBECREW_OAUTH_DB_ENCRYPTION_KEY: z
    .string({ error: "is required (64 hexadecimal characters; generate one with `openssl rand -hex 32`)" })
    .regex(hex64, "must be exactly 64 hexadecimal characters (generate one with `openssl rand -hex 32`)"),
  KUBECREW_OAUTH_INTERNAL_API_KEY: z.string({ error: "is required" }).min(32, "must be at least 32 characters"),
  KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS: z.string().default(""),
  KUBECREW_OAUTH_REFRESH_AHEAD_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  KUBECREW_OAUTH_CONNECT_SESSION_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(600),
  LOG_LEVEL: logLevel,
  ...outboundEnvSchema(clusterPolicy),
});

function hostList(raw: string): string[] {
  return raw
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

/** Parses the environment; a bad value throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: Env): IntegrationsConfig {
  const e = parseConfig(envSchema, env);
  const publicUrl = new URL(e.KUBECREW_OAUTH_PUBLIC_URL.replace(/\/+$/, ""));
  if (publicUrl.search || publicUrl.hash)
    throw new ConfigError("KUBECREW_OAUTH_PUBLIC_URL", "must not carry a query or fragment");
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
    outbound: outboundPolicyFrom(e),
    apps,
  };
}
