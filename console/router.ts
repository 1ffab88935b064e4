import { createHash, timingSafeEqual } from "node:crypto";
import { fileURLToPath } from "node:url";
import express, { Router, type Response } from "express";
import type { Logger } from "../core/logger.ts";
import { localSignInRefusal } from "./local-request.ts";
import type { OidcSignIn } from "./oidc-sign-in.ts";
import { securityHeaders } from "./security-headers.ts";
import type { ConsoleIdentity, ConsoleSession, ConsoleSessions } from "./session.ts";
import { vendorModules } from "./vendor.ts";

export const STATIC_DIR = fileURLToPath(new URL("./static/", import.meta.url));

/** Limits wrong secrets per source address (the API's AdminKeyGuesses, shared with X-Admin-Key). */
export interface GuessLimit {
  /** Seconds until the address may try again, or undefined while it may. */
  blockedFor(ip: string | undefined): Promise<number | undefined>;
  /** Counts a wrong secret from the address. */
  failed(ip: string | undefined): Promise<void>;
}

export interface ConsoleOptions {
  sessions: ConsoleSessions;
  /** `kubecrew dev`: the local user, signed in without a provider (from this machine at a loopback name only). */
  localUser?: ConsoleIdentity;
  /** KUBECREW_ADMIN_KEY: signs in an org admin, for the first setup. */
  adminKey?: string;
  /** Wrong admin keys per source address: past the limit, 429 before the key is compared. */
  adminKeyGuesses?: GuessLimit;
  /** OpenID Connect sign-in, when a provider is configured. */
  oidc?: OidcSignIn;
  /** KUBECREW_TRACE_URL: the template (with `{trace_id}`) of the link to an execution's trace. */
  traceUrl?: string;
  log: Logger;
}

const fail = (res: Response, status: number, error: string, message: string, headers: Record<string, string> = {}) =>
  res.status(status).set(headers).json({ error, message });

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * What the page learns about its session: who is signed in, the CSRF token to send back, how else to sign in; and,
 * signed in, the template of the trace link.
 */
function sessionBody(session: ConsoleSession | undefined, options: ConsoleOptions) {
  const signIn = { admin_key: Boolean(options.adminKey), oidc: Boolean(options.oidc) };
  if (!session) return { signed_in: false, sign_in: signIn };
  const { kind, subject, admin, name, csrf } = session;
  const links = options.traceUrl ? { trace_url: options.traceUrl } : {};
  return { signed_in: true, user: { kind, subject, admin, name: name ?? subject }, csrf, sign_in: signIn, ...links };
}

/**
 * The web console, mounted at /console/: the page and its modules, and the session routes. The page itself calls
 * the crew API (crews, kickoff, status, events, stop) with the session cookie, like any other client.
 */
export function consoleRouter(options: ConsoleOptions): Router {
  const { sessions } = options;
  const vendor = vendorModules();
  const router = Router();
  router.use(securityHeaders);

  router.get("/", (req, res, next) => {
    // Relative module and style URLs need the trailing slash.
    if (!req.originalUrl.split("?")[0]!.endsWith("/")) return res.redirect(301, "/console/");
    next();
  });

  router.get("/session", (req, res) => {
    res.set("Cache-Control", "no-store");
    let session = sessions.read(req);
    if (!session && options.localUser) {
      // Only this machine's own browser, naming the server by a loopback name: not a page that reached the port
      // through DNS rebinding, nor another machine. Without another way to sign in, say so.
      const refusal = localSignInRefusal(req);
      if (!refusal) session = sessions.signIn(req, res, options.localUser);
      else if (!options.adminKey && !options.oidc) return fail(res, 403, "Forbidden", refusal);
    }
    res.json(sessionBody(session, options));
  });

  router.post("/sign-in", express.json({ limit: "4kb" }), async (req, res) => {
    // JSON only: a cross-site form cannot send it without a CORS preflight, so nobody is signed in from elsewhere.
    if (!req.is("application/json")) return fail(res, 415, "Unsupported Media Type", "Send application/json");
    const key = (req.body as { admin_key?: unknown } | undefined)?.admin_key;
    if (!options.adminKey) return fail(res, 404, "Not Found", "Sign-in with the admin key is not configured");
    // Wrong keys are counted per address (with X-Admin-Key's); an uncounted guess is not answered (503).
    const guesses = options.adminKeyGuesses;
    const unavailable = () =>
      fail(res, 503, "Service Unavailable", "The sign-in cannot reach its store; retry shortly", {
        "Retry-After": "5",
      });
    const wait = await guesses?.blockedFor(req.ip).catch(() => null);
    if (wait === null) return unavailable();
    if (wait !== undefined) {
      const message = `Too many wrong admin keys; retry after ${wait} seconds`;
      return fail(res, 429, "Too Many Requests", message, { "Retry-After": String(wait) });
    }
    if (typeof key !== "string" || !timingSafeEqual(digest(key), digest(options.adminKey))) {
      options.log.warn({ ip: req.ip }, "Console sign-in with a wrong admin key");
      if ((await guesses?.failed(req.ip).catch(() => null)) === null) return unavailable();
      return fail(res, 401, "Unauthorized", "Wrong admin key");
    }
    const session = sessions.signIn(req, res, { kind: "org", crews: "*", subject: "admin", admin: true });
    res.set("Cache-Control", "no-store").json(sessionBody(session, options));
  });

  router.get("/sign-in/oidc", async (req, res) => {
    if (!options.oidc) return fail(res, 404, "Not Found", "OpenID Connect sign-in is not configured");
    await options.oidc.start(req, res);
  });

  router.get("/auth/callback", async (req, res) => {
    if (!options.oidc) return fail(res, 404, "Not Found", "OpenID Connect sign-in is not configured");
    const back = (problem: string) => res.redirect(303, `/console/?sign_in_error=${encodeURIComponent(problem)}`);
    if (typeof req.query.error === "string") return back(`The provider refused the sign-in: ${req.query.error}`);
    let identity;
    try {
      identity = await options.oidc.finish(req, res);
    } catch (err) {
      options.log.warn({ err: (err as Error).message }, "Console OpenID Connect sign-in failed");
      return back("The sign-in could not be completed; try again");
    }
    if (!identity) return back("The sign-in took too long or was started elsewhere; try again");
    sessions.signIn(req, res, identity);
    options.log.info({ subject: identity.subject, admin: identity.admin }, "Console sign-in");
    res.redirect(303, "/console/");
  });

  router.post("/sign-out", (req, res) => {
    if (sessions.read(req) && !sessions.csrfValid(req)) {
      return fail(res, 403, "Forbidden", "Missing or invalid CSRF token: send the session's X-CSRF-Token header");
    }
    sessions.signOut(req, res);
    res.status(204).end();
  });

  router.get("/vendor/:file", (req, res) => {
    const module = vendor.get(req.params.file);
    if (!module) return fail(res, 404, "Not Found", `No module ${req.params.file}`);
    res.type("text/javascript").send(module.source);
  });

  router.use(express.static(STATIC_DIR, { index: "index.html", fallthrough: true, redirect: false }));
  router.use((req, res) => fail(res, 404, "Not Found", `No console page at ${req.originalUrl.split("?")[0]}`));
  return router;
}
