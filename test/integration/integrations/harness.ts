import { randomBytes } from "node:crypto";
import fetchCookie from "fetch-cookie";
import { Redis } from "ioredis";
import { CookieJar } from "tough-cookie";
import { createLogger, silentLogger, type Logger } from "../../../core/logger.ts";
import { loadConfig } from "../../../integrations/config.ts";
import { providerRegistry } from "../../../integrations/providers.ts";
import { start, type IntegrationsService } from "../../../integrations/server.ts";
import { startOidcProvider, type OidcTestProvider, type TestClient } from "../../support/oidc-provider.ts";
import { freePort } from "../../support/ports.ts";

export const internalApiKey = "internal-api-key-for-tests-0123456789abcdef";
export const encryptionKey = "4f".repeat(32);
export const returnUrl = "https://app.example.com/settings/integrations";
export const tenantId = "6a0b8f3e-2c1d-4e5f-9a8b-7c6d5e4f3a2b";

export const clients = {
  google: { client_id: "google-client", client_secret: "google-secret-value-123" },
  microsoft: { client_id: "microsoft-client", client_secret: "microsoft-secret-value-123" },
  hubspot: { client_id: "hubspot-client", client_secret: "hubspot-secret-value-123" },
  notion: { client_id: "notion-client", client_secret: "notion-secret-value-123" },
  salesforce: { client_id: "salesforce-client", client_secret: "salesforce-secret-value-123" },
};

/** Public base URLs the provider accepts redirects to: the direct service URL and the proxied `/oauthsvc` one. */
export interface Bases {
  direct: string;
  directPort: number;
  proxied?: string;
  proxyPort?: number;
}

export async function planBases(options: { proxied?: boolean } = {}): Promise<Bases> {
  const directPort = await freePort();
  const bases: Bases = { direct: `http://127.0.0.1:${directPort}`, directPort };
  if (options.proxied) {
    bases.proxyPort = await freePort();
    bases.proxied = `http://127.0.0.1:${bases.proxyPort}/oauthsvc`;
  }
  return bases;
}

export function startProvider(publicBases: string[]): Promise<OidcTestProvider> {
  const redirects = (provider: string) => publicBases.map((base) => `${base}/v1/auth/${provider}/callback`);
  const testClients: TestClient[] = [
    { ...clients.google, redirect_uris: redirects("google") },
    { ...clients.microsoft, redirect_uris: redirects("microsoft") },
    { ...clients.hubspot, redirect_uris: redirects("hubspot") },
    // Notion authenticates its token requests with HTTP Basic (configured by the suites that connect Notion).
    { ...clients.notion, redirect_uris: redirects("notion"), token_endpoint_auth_method: "client_secret_basic" },
    { ...clients.salesforce, redirect_uris: redirects("salesforce") },
  ];
  const scopes = providerRegistry.flatMap((provider) => [
    ...provider.baseScopes,
    ...Object.values(provider.products).flatMap((product) => product.scopes),
  ]);
  return startOidcProvider({ clients: testClients, scopes: [...new Set(scopes)] });
}

/** The environment an operator would set, with the real google/microsoft/hubspot entries pointed at the test provider. */
export function integrationsEnv(options: {
  issuer: string;
  publicUrl: string;
  redisUrl: string;
  port: number;
  prefix: string;
  extra?: Record<string, string>;
}) {
  return {
    KUBECREW_INTEGRATIONS_HOST: "127.0.0.1",
    KUBECREW_INTEGRATIONS_PORT: String(options.port),
    KUBECREW_OAUTH_PUBLIC_URL: options.publicUrl,
    KUBECREW_REDIS_URL: options.redisUrl,
    KUBECREW_OAUTH_REDIS_KEY_PREFIX: options.prefix,
    KUBECREW_OAUTH_COOKIE_SECRET: "cookie-secret-for-tests-0123456789abcdef",
    KUBECREW_OAUTH_DB_ENCRYPTION_KEY: encryptionKey,
    KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey,
    KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS: "app.example.com",
    KUBECREW_OAUTH_REFRESH_AHEAD_SECONDS: "60",
    // The test provider listens on loopback, which the service's outbound policy refuses unless opened.
    KUBECREW_OUTBOUND_ALLOW: "127.0.0.1",
    KUBECREW_GOOGLE_CLIENT_ID: clients.google.client_id,
    KUBECREW_GOOGLE_CLIENT_SECRET: clients.google.client_secret,
    KUBECREW_GOOGLE_ISSUER_URL: options.issuer,
    KUBECREW_MICROSOFT_CLIENT_ID: clients.microsoft.client_id,
    KUBECREW_MICROSOFT_CLIENT_SECRET: clients.microsoft.client_secret,
    KUBECREW_MICROSOFT_ISSUER_URL: options.issuer,
    KUBECREW_HUBSPOT_CLIENT_ID: clients.hubspot.client_id,
    KUBECREW_HUBSPOT_CLIENT_SECRET: clients.hubspot.client_secret,
    KUBECREW_HUBSPOT_AUTHORIZATION_URL: `${options.issuer}/auth`,
    KUBECREW_HUBSPOT_TOKEN_URL: `${options.issuer}/token`,
    KUBECREW_HUBSPOT_REVOCATION_URL: `${options.issuer}/token/revocation`,
    ...options.extra,
  };
}

export function uniquePrefix(name: string): string {
  return `test:${name}:${randomBytes(4).toString("hex")}:`;
}

export async function startIntegrations(
  env: Record<string, string>,
  logger: Logger = silentLogger(),
  now?: () => Date,
): Promise<IntegrationsService> {
  return start(loadConfig(env), { logger, ...(now ? { now } : {}) });
}

/** The test provider and one integrations service at a direct public URL, on the shared Redis under `prefix`. */
export interface ProviderAndService {
  provider: OidcTestProvider;
  service: IntegrationsService;
  /** The service's environment, to start more replicas from or to search stored values for its secrets. */
  env: Record<string, string>;
  /** Stops the service, then the provider. */
  stop(): Promise<void>;
}

export async function startProviderAndService(options: {
  redisUrl: string;
  prefix: string;
  /** More variables; a function gets the test provider's issuer URL (for the providers it is not already set for). */
  extra?: Record<string, string> | ((issuer: string) => Record<string, string>);
  logger?: Logger;
  /** The service's clock (e.g. moved ahead to let stored access tokens expire). */
  now?: () => Date;
}): Promise<ProviderAndService> {
  const bases = await planBases();
  const provider = await startProvider([bases.direct]);
  const env = integrationsEnv({
    issuer: provider.issuer,
    publicUrl: bases.direct,
    redisUrl: options.redisUrl,
    port: bases.directPort,
    prefix: options.prefix,
    ...(options.extra
      ? { extra: typeof options.extra === "function" ? options.extra(provider.issuer) : options.extra }
      : {}),
  });
  const service = await startIntegrations(env, options.logger, options.now).catch(async (err: unknown) => {
    await provider.stop();
    throw err;
  });
  return {
    provider,
    service,
    env,
    async stop() {
      await service.stop();
      await provider.stop();
    },
  };
}

/** A real pino logger (with the project's redaction) whose lines the test can read. */
export function capturingLogger(): { logger: Logger; lines: () => string } {
  const chunks: string[] = [];
  const logger = createLogger(
    { level: "debug", name: "integrations" },
    { write: (chunk: string) => void chunks.push(chunk) },
  );
  return { logger, lines: () => chunks.join("") };
}

/** Calls the internal API with the key. */
export async function internal(service: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${service}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${internalApiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

export async function createConnectLink(
  service: string,
  request: { userId: string; provider: string; product: string; returnUrl?: string },
) {
  const { status, body } = await internal(service, "POST", "/v1/internal/connect-sessions", { returnUrl, ...request });
  if (status !== 201) throw new Error(`connect session: ${status} ${JSON.stringify(body)}`);
  return body as { id: string; url: string; expiresAt: string };
}

/** A browser without a screen: follows redirects and keeps cookies; stops when it is sent to the application. */
export class TestBrowser {
  readonly jar = new CookieJar();
  readonly fetch = fetchCookie(fetch, this.jar);
  readonly visited: string[] = [];
  readonly setCookies: string[] = [];

  /** Follows redirects from `url`; returns the final response, or the location once it leaves for `stopAtOrigin`. */
  async open(url: string, options: { stopAtOrigin?: string; stopAtPath?: RegExp } = {}) {
    const stopAtOrigin = options.stopAtOrigin ?? new URL(returnUrl).origin;
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      this.visited.push(current);
      const response = await this.fetch(current, { redirect: "manual" });
      this.setCookies.push(...response.headers.getSetCookie());
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        const next = new URL(location, current).href;
        if (next.startsWith(stopAtOrigin))
          return { status: response.status, location: next, body: await response.text() };
        if (options.stopAtPath && options.stopAtPath.test(new URL(next).pathname))
          return { status: response.status, location: next, body: "" };
        await response.arrayBuffer();
        current = next;
        continue;
      }
      return { status: response.status, location: undefined, body: await response.text(), url: current };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  async cookieHeader(url: string): Promise<string> {
    return this.jar.getCookieString(url);
  }
}

/** Every key under the prefix with its value(s), as text, to search for tokens. */
export async function dumpRedis(redisUrl: string, prefix: string): Promise<Map<string, string>> {
  const redis = new Redis(redisUrl);
  try {
    const dump = new Map<string, string>();
    for (const key of await redis.keys(`${prefix}*`)) {
      const type = await redis.type(key);
      if (type === "string") dump.set(key, (await redis.get(key)) ?? "");
      else if (type === "hash") dump.set(key, JSON.stringify(await redis.hgetall(key)));
      else if (type === "set") dump.set(key, JSON.stringify(await redis.smembers(key)));
      else dump.set(key, `<${type}>`);
    }
    return dump;
  } finally {
    redis.disconnect();
  }
}
