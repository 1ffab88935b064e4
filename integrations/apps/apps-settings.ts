import { appsSigningKey } from "../../core/app-credential.ts";
import { type ConfigOf, variable } from "../../core/config.ts";
import { z } from "zod";
import { endpointProblem } from "../provider-settings.ts";

/** A value of only spaces counts as unset, as for every variable the apps read. */
const unsetWhenBlank = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value) => (typeof value === "string" && value.trim() === "" ? undefined : value), schema);

/** An API root: https, or plain http on loopback only (local provider fixtures), as a provider's endpoints. */
const apiRootUrl = z
  .string()
  .trim()
  .transform((raw, ctx) => {
    const problem = endpointProblem(raw);
    if (problem === undefined) return new URL(raw);
    ctx.addIssue({ code: "custom", message: problem });
    return z.NEVER;
  });

const apiRoot = (
  name: string,
  provider: string,
  meta = {
    description: `The ${provider} API root the app actions call (https, or http on loopback).`,
    defaultText: "the provider's public API",
  },
) => variable(name, unsetWhenBlank(apiRootUrl.optional()).meta(meta));

/**
 * Connected apps served as MCP at /v1/mcp: the integrations service's `apps` fields, each beside its variable. The API
 * roots move where the app actions call each provider's API (tests, a regional or sovereign cloud endpoint); unset, each
 * SDK calls the public API.
 */
export const appsFields = {
  signingKey: variable(
    appsSigningKey.name,
    unsetWhenBlank(appsSigningKey.schema.optional()).describe(
      "Verifies the execution-scoped app credentials (the key the controller or kubecrew dev signs them with, at least 32 characters); without it /v1/mcp answers 503.",
    ),
  ),
  apiRoots: {
    /** The root of Gmail, Calendar, Drive, Sheets and Docs (each SDK's `rootUrl`). */
    google: apiRoot("KUBECREW_GOOGLE_API_BASE_URL", "google"),
    /** The Graph root (without `/v1.0`). */
    microsoft: apiRoot("KUBECREW_MICROSOFT_GRAPH_BASE_URL", "microsoft"),
    hubspot: apiRoot("KUBECREW_HUBSPOT_API_BASE_URL", "hubspot"),
    notion: apiRoot("KUBECREW_NOTION_API_BASE_URL", "notion"),
    salesforce: apiRoot("KUBECREW_SALESFORCE_INSTANCE_URL", "salesforce", {
      description:
        "The salesforce instance the app actions call instead of the one each connection got at sign-in: one fixed org (https, or http on loopback).",
      defaultText: "each connection's own instance",
    }),
  },
  connectReturnUrl: variable(
    "KUBECREW_APPS_CONNECT_RETURN_URL",
    unsetWhenBlank(
      z
        .string()
        .trim()
        .refine((raw) => URL.canParse(raw), "must be an absolute http(s) URL")
        .optional(),
    ).meta({
      description: 'Where a "connect at <url>" link returns the browser; on an allowed return host.',
      defaultText: "this service's own page",
    }),
  ),
};

export type AppsSettings = ConfigOf<typeof appsFields>;
export type ProviderApiRoots = AppsSettings["apiRoots"];
