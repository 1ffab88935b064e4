import { z } from "zod";
import { ConfigError, configSchema, derived, variable, type ConfigOf } from "../core/config.ts";

const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? "")
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  );

const clientId = variable(
  "KUBECREW_CONSOLE_OIDC_CLIENT_ID",
  z
    .string()
    .min(1)
    .optional()
    .describe("The console's client ID at the OpenID Connect provider (with KUBECREW_CONSOLE_OIDC_ISSUER)."),
);
const clientSecret = variable(
  "KUBECREW_CONSOLE_OIDC_CLIENT_SECRET",
  z
    .string()
    .min(1)
    .optional()
    .describe("The console's client secret at the OpenID Connect provider (with KUBECREW_CONSOLE_OIDC_ISSUER)."),
);

/** OpenID Connect sign-in, when an issuer is set: the issuer, the console's client and who the org admins are. */
const oidc = derived(
  {
    issuer: variable(
      "KUBECREW_CONSOLE_OIDC_ISSUER",
      z
        .url()
        .optional()
        .describe("OpenID Connect sign-in: the provider's issuer URL (Google, Entra ID, Keycloak, Dex, …)."),
    ),
    clientId,
    clientSecret,
    groupsClaim: variable(
      "KUBECREW_CONSOLE_OIDC_GROUPS_CLAIM",
      z.string().min(1).default("groups").describe("The ID token claim listing the user's groups."),
    ),
    adminGroups: variable(
      "KUBECREW_CONSOLE_ADMIN_GROUPS",
      list.describe("Comma-separated groups whose members are org admins in the console."),
    ),
    adminEmails: variable(
      "KUBECREW_CONSOLE_ADMIN_EMAILS",
      list
        .transform((emails) => emails.map((email) => email.toLowerCase()))
        .describe("Comma-separated email addresses of org admins in the console."),
    ),
  },
  ({ issuer, clientId: id, clientSecret: secret, ...rest }) => {
    if (!issuer) return undefined;
    if (!id || !secret) {
      throw new ConfigError((id ? clientSecret : clientId).name, "is required with KUBECREW_CONSOLE_OIDC_ISSUER");
    }
    return { issuer: new URL(issuer), clientId: id, clientSecret: secret, ...rest };
  },
);

/**
 * The web console's settings, each beside its variable; a part of `kubecrew api`'s and `kubecrew dev`'s
 * configurations.
 */
export const consoleFields = {
  sessionSecret: variable(
    "KUBECREW_CONSOLE_SESSION_SECRET",
    z
      .string()
      .min(32, "at least 32 characters")
      .optional()
      .describe("Signs the console's session cookies; every API replica needs the same one (32 characters or more)."),
  ),
  sessionTtlSeconds: variable(
    "KUBECREW_CONSOLE_SESSION_TTL_SECONDS",
    z.coerce
      .number()
      .int()
      .positive()
      .default(8 * 3600)
      .describe("How long a console session lasts."),
  ),
  oidc,
  publicUrl: variable(
    "KUBECREW_CONSOLE_PUBLIC_URL",
    z
      .url()
      .optional()
      .transform((url) => url?.replace(/\/+$/, ""))
      .describe(
        "The console's public origin (e.g. https://crews.example.com), for the OIDC redirect URI; the request's otherwise.",
      ),
  ),
  /** A URL template with `{trace_id}`, the link to an execution's trace. */
  traceUrl: variable(
    "KUBECREW_TRACE_URL",
    z
      .url({ protocol: /^https?$/ })
      .refine((url) => url.includes("{trace_id}"), "must contain {trace_id}, where the execution's trace id goes")
      .optional()
      .describe(
        "The console's link to an execution's trace in your trace viewer: an http(s) URL with `{trace_id}` " +
          "(e.g. https://jaeger.example.com/trace/{trace_id}); no link when unset.",
      ),
  ),
};

/** The console's settings from the environment (for a test of them alone: api and dev parse them as a part). */
export const consoleSettingsSchema = configSchema(consoleFields);

export type ConsoleSettings = ConfigOf<typeof consoleFields>;
export type OidcSettings = NonNullable<ConsoleSettings["oidc"]>;
