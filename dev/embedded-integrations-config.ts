import { randomBytes } from "node:crypto";
import { loadConfig, type IntegrationsConfig } from "../integrations/config.ts";
import { providerRegistry } from "../integrations/providers.ts";
import type { OutboundPolicy } from "../core/outbound/policy.ts";

/** Where `kubecrew dev` serves the integrations service: the path a cluster's Ingress gives it on the web host. */
export const EMBEDDED_INTEGRATIONS_PATH = "/oauthsvc";

/** The integrations service `kubecrew dev` runs in its process, as resolved from the environment at start-up. */
export interface EmbeddedIntegrationsSettings {
  /**
   * The service's configuration. Its public URL is KUBECREW_OAUTH_PUBLIC_URL when given; otherwise the dev server's own URL
   * with /oauthsvc, set once it listens (publicUrlGiven false).
   */
  config: IntegrationsConfig;
  publicUrlGiven: boolean;
  /** The key the crew API calls the internal API with (KUBECREW_OAUTH_INTERNAL_API_KEY, or generated). */
  internalApiKey: string;
  /** Signs the executions' app credentials (KUBECREW_APPS_SIGNING_KEY, or generated). */
  appsSigningKey: string;
  /** KUBECREW_OAUTH_DB_ENCRYPTION_KEY given: connections kept in Redis can be read after a restart. */
  encryptionKeyGiven: boolean;
}

type Env = Record<string, unknown>;

/** The secrets the service needs; each one not given is generated for this process and never printed. */
const SECRETS = [
  "KUBECREW_OAUTH_COOKIE_SECRET",
  "KUBECREW_OAUTH_DB_ENCRYPTION_KEY",
  "KUBECREW_OAUTH_INTERNAL_API_KEY",
  "KUBECREW_APPS_SIGNING_KEY",
];

/** The service's variables as `kubecrew integrations` reads them (providers, secrets, API roots), for dev. */
export function embeddedIntegrationsFrom(
  env: Env,
  dev: { port: number; outbound: OutboundPolicy },
): EmbeddedIntegrationsSettings {
  const given = (name: string) => {
    const value = env[name];
    return typeof value === "string" && value.trim() ? value : undefined;
  };
  const strings = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
  const secrets = Object.fromEntries(SECRETS.map((name) => [name, given(name) ?? randomBytes(32).toString("hex")]));
  const publicUrl = given("KUBECREW_OAUTH_PUBLIC_URL");
  const config = loadConfig({
    ...strings,
    ...secrets,
    // Until the dev server listens (PORT=0 picks its port then), the URL it will most likely have.
    KUBECREW_OAUTH_PUBLIC_URL: publicUrl ?? `http://127.0.0.1:${dev.port || 8080}${EMBEDDED_INTEGRATIONS_PATH}`,
    // The console that sends the browser to connect an app, on this machine whichever name it was opened by.
    KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS: [
      given("KUBECREW_OAUTH_ALLOWED_RETURN_HOSTS") ?? "",
      "127.0.0.1",
      "localhost",
      "[::1]",
    ].join(","),
  });
  return {
    // Provider calls as dev's own: a local test provider or API fixture on loopback is allowed.
    config: { ...config, outbound: dev.outbound },
    publicUrlGiven: publicUrl !== undefined,
    internalApiKey: secrets["KUBECREW_OAUTH_INTERNAL_API_KEY"]!,
    appsSigningKey: secrets["KUBECREW_APPS_SIGNING_KEY"]!,
    encryptionKeyGiven: given("KUBECREW_OAUTH_DB_ENCRYPTION_KEY") !== undefined,
  };
}

/** The configuration with the dev server's URL as the public one, unless KUBECREW_OAUTH_PUBLIC_URL said otherwise. */
export function withDevUrl(settings: EmbeddedIntegrationsSettings, devUrl: string): IntegrationsConfig {
  if (settings.publicUrlGiven) return settings.config;
  const publicUrl = new URL(`${devUrl.replace(/\/+$/, "")}${EMBEDDED_INTEGRATIONS_PATH}`);
  const hosts = new Set([publicUrl.host.toLowerCase(), ...settings.config.allowedReturnHosts]);
  return { ...settings.config, publicUrl, allowedReturnHosts: [...hosts] };
}

/** `KUBECREW_GOOGLE_CLIENT_SECRET`, `KUBECREW_GOOGLE_GMAIL_CLIENT_SECRET` and the like, for every provider of the registry. */
const providerSecret = new RegExp(
  `^KUBECREW_(${providerRegistry.map((p) => p.id.toUpperCase()).join("|")})_([A-Z0-9_]+_)?CLIENT_SECRET$`,
);

/**
 * The environment task processes inherit, without the integrations service's secrets: as a task pod, a task process
 * reaches /v1/mcp with its execution's app credential only, never the internal key, the signing key or a client secret.
 */
export function withoutIntegrationsSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !SECRETS.includes(name) && !providerSecret.test(name)),
  );
}
