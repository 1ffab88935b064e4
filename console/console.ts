import { randomBytes } from "node:crypto";
import type { Router } from "express";
import type { Logger } from "../core/logger.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import type { ConsoleSettings } from "./config.ts";
import { OidcSignIn } from "./oidc-sign-in.ts";
import { consoleRouter, type GuessLimit } from "./router.ts";
import { ConsoleSessions, type ConsoleIdentity } from "./session.ts";

export interface ConsoleConfig extends ConsoleSettings {
  /** The outbound client's fetch: the OpenID provider is reached through the outbound URL policy. */
  fetch: Fetch;
  /** `kubecrew dev`: the local user, signed in without a provider. */
  localUser?: ConsoleIdentity;
  /** `kubecrew dev`: one process, whose sessions may end with it (no secret needed, no warning without one). */
  oneProcess?: boolean;
  adminKey?: string;
  /** Wrong admin keys per source address, counted with X-Admin-Key's (the API's AdminKeyGuesses). */
  adminKeyGuesses?: GuessLimit;
}

/** The web console for createApp's `console`: its router (mounted at /console) and its sessions. */
export function createConsole(config: ConsoleConfig, log: Logger): { router: Router; sessions: ConsoleSessions } {
  if (!config.sessionSecret && !config.oneProcess) {
    log.warn(
      "KUBECREW_CONSOLE_SESSION_SECRET is not set: console sessions are signed with a random key and end when " +
        "this process does (and are not valid on other replicas)",
    );
  }
  // Without KUBECREW_CONSOLE_SESSION_SECRET a random key: sessions last as long as the process.
  const secret = config.sessionSecret ?? randomBytes(32).toString("base64url");
  const sessions = new ConsoleSessions({ secret, ttlSeconds: config.sessionTtlSeconds });
  const oidc =
    config.oidc &&
    new OidcSignIn({
      settings: config.oidc,
      fetch: config.fetch,
      secret,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    });
  const router = consoleRouter({
    sessions,
    log,
    ...(config.localUser ? { localUser: config.localUser } : {}),
    ...(config.adminKey ? { adminKey: config.adminKey } : {}),
    ...(config.adminKeyGuesses ? { adminKeyGuesses: config.adminKeyGuesses } : {}),
    ...(oidc ? { oidc } : {}),
    ...(config.traceUrl ? { traceUrl: config.traceUrl } : {}),
  });
  return { router, sessions };
}

/** `kubecrew dev`'s user: signed in without a provider, an org admin of every crew. */
export const LOCAL_USER: ConsoleIdentity = {
  kind: "org",
  crews: "*",
  subject: "local",
  admin: true,
  name: "local user",
  user: "local",
};
