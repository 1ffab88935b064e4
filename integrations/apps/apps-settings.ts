import { appsSigningKey, appsSigningKeyFrom } from "../../core/app-credential.ts";
import { ConfigError } from "../../core/config.ts";
import { z } from "zod";
import { endpointUrl } from "../provider-settings.ts";

/**
 * Where the app actions call each provider's API. Unset: the provider SDK's own default (the public API). Set (tests, a
 * regional or sovereign cloud endpoint): that root for every API of the provider; https, or http on loopback only.
 */
export interface ProviderApiRoots {
  /** KUBECREW_GOOGLE_API_BASE_URL: the root of Gmail, Calendar, Drive, Sheets and Docs (each SDK's `rootUrl`). */
  google?: URL;
  /** KUBECREW_MICROSOFT_GRAPH_BASE_URL: the Graph root (without `/v1.0`). */
  microsoft?: URL;
  /** KUBECREW_HUBSPOT_API_BASE_URL. */
  hubspot?: URL;
  /** KUBECREW_NOTION_API_BASE_URL. */
  notion?: URL;
  /** KUBECREW_SALESFORCE_INSTANCE_URL: overrides the instance URL each Salesforce connection got at sign-in (tests, one fixed org). */
  salesforce?: URL;
}

export interface AppsSettings {
  /** KUBECREW_APPS_SIGNING_KEY: verifies app credentials. Without it /v1/mcp answers 503. */
  signingKey?: string;
  apiRoots: ProviderApiRoots;
  /** KUBECREW_APPS_CONNECT_RETURN_URL: where a "connect at <url>" link returns the browser; default this service's page. */
  connectReturnUrl?: string;
}

type Env = Record<string, string | undefined>;

const roots: [keyof ProviderApiRoots, string][] = [
  ["google", "KUBECREW_GOOGLE_API_BASE_URL"],
  ["microsoft", "KUBECREW_MICROSOFT_GRAPH_BASE_URL"],
  ["hubspot", "KUBECREW_HUBSPOT_API_BASE_URL"],
  ["notion", "KUBECREW_NOTION_API_BASE_URL"],
  ["salesforce", "KUBECREW_SALESFORCE_INSTANCE_URL"],
];

/** What loadAppsSettings reads: for docs/configuration.md. */
export const appsSettingsVariables = z.object({
  [appsSigningKey.name]: appsSigningKey.schema
    .optional()
    .describe(
      "Verifies the execution-scoped app credentials (the key the controller or kubecrew dev signs them with, at least 32 characters); without it /v1/mcp answers 503.",
    ),
  KUBECREW_APPS_CONNECT_RETURN_URL: z.string().optional().meta({
    description: 'Where a "connect at <url>" link returns the browser; on an allowed return host.',
    defaultText: "this service's own page",
  }),
  ...Object.fromEntries(
    roots.map(([provider, variable]) => [
      variable,
      z
        .string()
        .optional()
        .meta({
          description: `The ${provider} API root the app actions call (https, or http on loopback).`,
          defaultText: "the provider's public API",
        }),
    ]),
  ),
});

export function loadAppsSettings(env: Env): AppsSettings {
  const signingKey = env[appsSigningKey.name]?.trim() ? appsSigningKeyFrom(env) : undefined;
  const apiRoots: ProviderApiRoots = {};
  for (const [provider, variable] of roots) {
    const url = endpointUrl(env, variable);
    if (url) apiRoots[provider] = url;
  }
  const connectReturnUrl = env["KUBECREW_APPS_CONNECT_RETURN_URL"]?.trim() || undefined;
  if (connectReturnUrl !== undefined && !URL.canParse(connectReturnUrl))
    throw new ConfigError("KUBECREW_APPS_CONNECT_RETURN_URL", "must be an absolute http(s) URL");
  return { ...(signingKey ? { signingKey } : {}), apiRoots, ...(connectReturnUrl ? { connectReturnUrl } : {}) };
}
