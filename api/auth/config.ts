import { z } from "zod";
import { REDIS_COMMAND_TIMEOUT_MS } from "../../platform/redis-client.ts";
import { configSchema, variable } from "../../core/config.ts";

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * Settings of tokens, the token endpoint, its rate limits and the admin API, each beside its variable. A part of the
 * configs of the commands that serve the API (`kubecrew api`, `kubecrew dev`).
 */
export const authFields = {
  tokenTtlSeconds: variable(
    "KUBECREW_TOKEN_TTL_SECONDS",
    positiveInt(3600).describe("The lifetime of access tokens from the token endpoint (`expires_in`)."),
  ),
  rateLimits: {
    perClient: variable(
      "KUBECREW_OAUTH_RATE_LIMIT_PER_CLIENT",
      positiveInt(60).describe(
        "Token requests per window for one client_id from one source address, a failed authentication counting as KUBECREW_OAUTH_FAILED_AUTH_COST; also the tokens one client is issued per window from all addresses.",
      ),
    ),
    perIp: variable(
      "KUBECREW_OAUTH_RATE_LIMIT_PER_IP",
      positiveInt(300).describe(
        "Token requests per window from one source address (an IPv6 /64 counts as one address).",
      ),
    ),
    windowSeconds: variable(
      "KUBECREW_OAUTH_RATE_LIMIT_WINDOW_SECONDS",
      positiveInt(60).describe("The token endpoint's rate-limit window."),
    ),
    failedAuthCost: variable(
      "KUBECREW_OAUTH_FAILED_AUTH_COST",
      positiveInt(5).describe("How many requests one failed client authentication counts as (brute-force protection)."),
    ),
  },
  realm: variable(
    "KUBECREW_OAUTH_REALM",
    z
      .string()
      .regex(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/, "printable ASCII without quotes or backslashes")
      .default("kubecrew")
      .describe('The realm in `WWW-Authenticate: Basic realm="…"`.'),
  ),
  /** The admin API is mounted only when set. */
  adminKey: variable(
    "KUBECREW_ADMIN_KEY",
    z
      .string()
      .min(32, "at least 32 characters")
      .optional()
      .describe(
        "Enables the admin API (`/admin/tokens`, `/admin/clients`) for callers sending it in `X-Admin-Key` (at least 32 characters).",
      ),
  ),
  adminKeyGuesses: {
    failuresPerIp: variable(
      "KUBECREW_ADMIN_KEY_FAILURES_PER_IP",
      positiveInt(10).describe(
        "Wrong admin keys (X-Admin-Key, the console's sign-in) one source address may send per window; then 429.",
      ),
    ),
    windowSeconds: variable(
      "KUBECREW_ADMIN_KEY_FAILURE_WINDOW_SECONDS",
      positiveInt(600).describe("The window of KUBECREW_ADMIN_KEY_FAILURES_PER_IP."),
    ),
  },
  redisKeyPrefix: variable(
    "KUBECREW_REDIS_KEY_PREFIX",
    z
      .string()
      .default("kubecrew:")
      .describe(
        "The prefix of the API's Redis keys (tokens, clients, rate limits), so several deployments can share one Redis.",
      ),
  ),
  redisCommandTimeoutMs: variable(
    "KUBECREW_REDIS_COMMAND_TIMEOUT_MS",
    positiveInt(REDIS_COMMAND_TIMEOUT_MS).describe(
      "A Redis command slower than this fails, so requests answer 503 instead of hanging while Redis is unwell.",
    ),
  ),
  /** How long a verified token is answered from memory (0: never). */
  tokenCacheMs: variable(
    "KUBECREW_TOKEN_CACHE_MS",
    z.coerce
      .number()
      .int()
      .min(0)
      .default(2000)
      .describe(
        "How long a replica answers a token it verified from memory (revocations reach it at once through Redis pub/sub); 0 asks Redis on every request.",
      ),
  ),
};

/** The environment to AuthConfig. */
export const authConfigSchema = configSchema(authFields);

/** Tokens, the token endpoint and the admin API: the schema's type. */
export type AuthConfig = z.infer<typeof authConfigSchema>;
