import { z } from "zod";
import { ConfigError } from "../core/config.ts";

const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? "")
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  );

/** The web console's settings, from the environment; merged into `kubecrew api`'s and `kubecrew dev`'s schemas. */
export const consoleEnv = z.object({
  KUBECREW_CONSOLE_SESSION_SECRET: z
    .string()
    .min(32, "at least 32 characters")
    .optional()
    .describe("Signs the console's session cookies; every API replica needs the same one (32 characters or more)."),
  KUBECREW_CONSOLE_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 3600)
    .describe("How long a console session lasts."),
  KUBECREW_CONSOLE_OIDC_ISSUER: z
    .url()
    .optional()
    .describe("OpenID Connect sign-in: the provider's issuer URL (Google, Entra ID, Keycloak, Dex, …)."),
  KUBECREW_CONSOLE_OIDC_CLIENT_ID: z
    .string()
    .min(1)
    .optional()
    .describe("The console's client ID at the OpenID Connect provider (with KUBECREW_CONSOLE_OIDC_ISSUER)."),
  KUBECREW_CONSOLE_OIDC_CLIENT_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe("The console's client secret at the OpenID Connect provider (with KUBECREW_CONSOLE_OIDC_ISSUER)."),
  KUBECREW_CONSOLE_OIDC_GROUPS_CLAIM: z
    .string()
    .min(1)
    .default("groups")
    .describe("The ID token claim listing the user's groups."),
  KUBECREW_CONSOLE_ADMIN_GROUPS: list.describe("Comma-separated groups whose members are org admins in the console."),
  KUBECREW_CONSOLE_ADMIN_EMAILS: list.describe("Comma-separated email addresses of org admins in the console."),
  KUBECREW_TRACE_URL: z
    .url({ protocol: /^https?$/ })
    .refine((url) => url.includes("{trace_id}"), "must contain {trace_id}, where the execution's trace id goes")
    .optional()
    .describe(
      "The console's link to an execution's trace in your trace viewer: an http(s) URL with `{trace_id}` " +
        "(e.g. https://jaeger.example.com/trace/{trace_id}); no link when unset.",
    ),
  KUBECREW_CONSOLE_PUBLIC_URL: z
    .url()
    .optional()
    .describe(
      "The console's public origin (e.g. https://crews.example.com), for the OIDC redirect URI; the request's otherwise.",
    ),
});

export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  groupsClaim: string;
  adminGroups: string[];
  adminEmails: string[];
}

export interface ConsoleSettings {
  sessionSecret?: string;
  sessionTtlSeconds: number;
  oidc?: OidcSettings;
  publicUrl?: string;
  /** KUBECREW_TRACE_URL: a URL template with `{trace_id}`, the link to an execution's trace. */
  traceUrl?: string;
}

export function consoleSettingsFrom(e: z.infer<typeof consoleEnv>): ConsoleSettings {
  const issuer = e.KUBECREW_CONSOLE_OIDC_ISSUER;
  if (issuer && (!e.KUBECREW_CONSOLE_OIDC_CLIENT_ID || !e.KUBECREW_CONSOLE_OIDC_CLIENT_SECRET)) {
    const missing = e.KUBECREW_CONSOLE_OIDC_CLIENT_ID ? "SECRET" : "ID";
    throw new ConfigError(`KUBECREW_CONSOLE_OIDC_CLIENT_${missing}`, "is required with KUBECREW_CONSOLE_OIDC_ISSUER");
  }
  return {
    ...(e.KUBECREW_CONSOLE_SESSION_SECRET ? { sessionSecret: e.KUBECREW_CONSOLE_SESSION_SECRET } : {}),
    sessionTtlSeconds: e.KUBECREW_CONSOLE_SESSION_TTL_SECONDS,
    ...(issuer
      ? {
          oidc: {
            issuer: new URL(issuer),
            clientId: e.KUBECREW_CONSOLE_OIDC_CLIENT_ID!,
            clientSecret: e.KUBECREW_CONSOLE_OIDC_CLIENT_SECRET!,
            groupsClaim: e.KUBECREW_CONSOLE_OIDC_GROUPS_CLAIM,
            adminGroups: e.KUBECREW_CONSOLE_ADMIN_GROUPS,
            adminEmails: e.KUBECREW_CONSOLE_ADMIN_EMAILS.map((email) => email.toLowerCase()),
          },
        }
      : {}),
    ...(e.KUBECREW_CONSOLE_PUBLIC_URL ? { publicUrl: e.KUBECREW_CONSOLE_PUBLIC_URL.replace(/\/+$/, "") } : {}),
    ...(e.KUBECREW_TRACE_URL ? { traceUrl: e.KUBECREW_TRACE_URL } : {}),
  };
}
