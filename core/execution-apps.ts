import { z } from "zod";
import { appsSigningKey } from "./app-credential.ts";
import { ConfigError, derived, variable, type ConfigOf } from "./config.ts";

/**
 * Connected apps as the components that start executions see them (the controller, `kubecrew dev`): where task
 * processes reach the apps (the integrations service's `/v1/mcp`), the key that signs execution credentials, and the
 * integrations service's internal API for revoking a finished execution's credential.
 */
export const appsFields = {
  url: variable(
    "KUBECREW_APPS_URL",
    z
      .string()
      .url()
      .optional()
      .describe(
        "The integrations service's MCP endpoint (`…/v1/mcp`), where task processes of agents with apps call them.",
      ),
  ),
  signingKey: variable(appsSigningKey.name, appsSigningKey.schema.optional()),
  integrationsUrl: variable(
    "KUBECREW_INTEGRATIONS_URL",
    z.string().url().optional().meta({
      description: "The integrations service's base URL, for its internal API (connections, revoking credentials).",
      defaultText: "KUBECREW_APPS_URL without `/v1/mcp`",
    }),
  ),
  internalApiKey: variable(
    "KUBECREW_OAUTH_INTERNAL_API_KEY",
    z
      .string()
      .min(1)
      .optional()
      .describe("The integrations service's internal API key (never handed to task processes)."),
  ),
};

export type AppsValues = ConfigOf<typeof appsFields>;

export interface AppsSettings {
  /** The apps' MCP endpoint task processes call. */
  url: string;
  signingKey: string;
  /** Revocation at the integrations service; without it a credential only expires at its deadline. */
  revoke?: { integrationsUrl: string; internalApiKey: string };
}

/** The integrations service's base URL: KUBECREW_INTEGRATIONS_URL, else the apps' URL without `/v1/mcp`. */
export function integrationsUrlFrom(e: AppsValues): string | undefined {
  const base = e.integrationsUrl ?? e.url?.replace(/\/+$/, "").replace(/\/v1\/mcp$/, "");
  return base?.replace(/\/+$/, "");
}

/** The apps settings, or undefined without KUBECREW_APPS_URL; the URL without a signing key is a ConfigError. */
export function appsSettingsOf(e: AppsValues): AppsSettings | undefined {
  if (!e.url) return undefined;
  if (!e.signingKey) {
    throw new ConfigError(
      appsFields.signingKey.name,
      "is required with KUBECREW_APPS_URL (at least 32 characters, the key the integrations service has)",
    );
  }
  const integrationsUrl = integrationsUrlFrom(e);
  return {
    url: e.url,
    signingKey: e.signingKey,
    ...(e.internalApiKey && integrationsUrl ? { revoke: { integrationsUrl, internalApiKey: e.internalApiKey } } : {}),
  };
}

/** The apps settings as a field of a config object (undefined without KUBECREW_APPS_URL). */
export const appsSettings = derived(appsFields, appsSettingsOf);
