import { z } from "zod";
import { appsSigningKeyEnv } from "./app-credential.ts";
import { ConfigError } from "./config.ts";

/**
 * Connected apps as the components that start executions see them (the controller, `kubecrew dev`): where task
 * processes reach the apps (the integrations service's `/v1/mcp`), the key that signs execution credentials, and the
 * integrations service's internal API for revoking a finished execution's credential.
 */
export const appsEnv = {
  KUBECREW_APPS_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "The integrations service's MCP endpoint (`…/v1/mcp`), where task processes of agents with apps call them.",
    ),
  KUBECREW_APPS_SIGNING_KEY: appsSigningKeyEnv.KUBECREW_APPS_SIGNING_KEY.optional(),
  KUBECREW_INTEGRATIONS_URL: z.string().url().optional().meta({
    description: "The integrations service's base URL, for its internal API (connections, revoking credentials).",
    defaultText: "KUBECREW_APPS_URL without `/v1/mcp`",
  }),
  KUBECREW_OAUTH_INTERNAL_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe("The integrations service's internal API key (never handed to task processes)."),
};

type AppsEnv = z.infer<z.ZodObject<typeof appsEnv>>;

export interface AppsSettings {
  /** The apps' MCP endpoint task processes call. */
  url: string;
  signingKey: string;
  /** Revocation at the integrations service; without it a credential only expires at its deadline. */
  revoke?: { integrationsUrl: string; internalApiKey: string };
}

/** The integrations service's base URL: KUBECREW_INTEGRATIONS_URL, else the apps' URL without `/v1/mcp`. */
export function integrationsUrlFrom(e: AppsEnv): string | undefined {
  const base = e.KUBECREW_INTEGRATIONS_URL ?? e.KUBECREW_APPS_URL?.replace(/\/+$/, "").replace(/\/v1\/mcp$/, "");
  return base?.replace(/\/+$/, "");
}

/** The apps settings, or undefined without KUBECREW_APPS_URL; the URL without a signing key is a ConfigError. */
export function appsSettingsFrom(e: AppsEnv): AppsSettings | undefined {
  if (!e.KUBECREW_APPS_URL) return undefined;
  if (!e.KUBECREW_APPS_SIGNING_KEY) {
    throw new ConfigError(
      "KUBECREW_APPS_SIGNING_KEY",
      "is required with KUBECREW_APPS_URL (at least 32 characters, the key the integrations service has)",
    );
  }
  const integrationsUrl = integrationsUrlFrom(e);
  return {
    url: e.KUBECREW_APPS_URL,
    signingKey: e.KUBECREW_APPS_SIGNING_KEY,
    ...(e.KUBECREW_OAUTH_INTERNAL_API_KEY && integrationsUrl
      ? { revoke: { integrationsUrl, internalApiKey: e.KUBECREW_OAUTH_INTERNAL_API_KEY } }
      : {}),
  };
}
