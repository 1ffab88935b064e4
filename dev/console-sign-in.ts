import { randomBytes } from "node:crypto";
import { LOCAL_USER } from "../console/console.ts";
import type { ConsoleSettings } from "../console/config.ts";
import { isLoopbackBind } from "../console/local-request.ts";
import type { ConsoleIdentity } from "../console/session.ts";

/** How `kubecrew dev`'s console signs people in; the banner says which. */
export interface DevSignIn {
  /** local: the local user, automatically (this machine only); admin-key: the sign-in page; oidc: the provider. */
  how: "local" | "admin-key" | "oidc";
  localUser?: ConsoleIdentity;
  /** The admin key the console and the admin API take: KUBECREW_ADMIN_KEY, or one generated for this run. */
  adminKey?: string;
  /** Whether adminKey was generated here (the banner prints it: nobody else knows it). */
  generated: boolean;
}

/**
 * The local user is signed in without a provider only while the port is reachable from this machine alone (HOST a
 * loopback address); bound elsewhere (HOST=0.0.0.0 in a container, a LAN address) anyone reaching the port would be
 * an org admin, so the console asks for the admin key instead, generated for the run when KUBECREW_ADMIN_KEY is unset.
 */
export function devSignIn(host: string, console: ConsoleSettings, adminKey: string | undefined): DevSignIn {
  const configured = adminKey ? { adminKey } : {};
  if (console.oidc) return { how: "oidc", ...configured, generated: false };
  if (isLoopbackBind(host)) return { how: "local", localUser: LOCAL_USER, ...configured, generated: false };
  if (adminKey) return { how: "admin-key", adminKey, generated: false };
  return { how: "admin-key", adminKey: randomBytes(32).toString("base64url"), generated: true };
}
