import { Router, type Request } from "express";
import { appCatalogue, appNames, isAppName, type AppName } from "../../core/apps.ts";
import { bearerAuth, principalOf } from "../auth/bearer.ts";
import type { SessionAuth } from "../auth/session-auth.ts";
import type { TokenStore } from "../auth/token-store.ts";
import { ApiError, badRequest, forbidden } from "../errors.ts";
import { parseOr400 } from "../validation.ts";
import { refuseWrongMethods } from "../../platform/http/wrong-methods.ts";
import { connectRequest, type AppConnection } from "./bodies.ts";
import { IntegrationsRefused, type IntegrationsClient, type IntegrationsConnection } from "./integrations-client.ts";

export interface ConnectionsDeps {
  tokens: TokenStore;
  /** The integrations service's internal API; undefined when this installation has none configured. */
  integrations: IntegrationsClient | undefined;
  /** The web console's sessions: its signed-in user manages their own connections (the Apps tab). */
  sessions?: SessionAuth;
}

const appNotFound = (app: string) =>
  new ApiError(404, "App not found", `No app named "${app}"; apps: ${appNames.join(", ")}`);

const notConfigured = () =>
  new ApiError(
    404,
    "Connections not configured",
    "This installation has no integrations service configured (KUBECREW_INTEGRATIONS_URL and KUBECREW_OAUTH_INTERNAL_API_KEY)",
  );

/** The caller's user: connections belong to users (user tokens, and org admins signed in to the console as themselves). */
function userOf(req: Request): string {
  const principal = principalOf(req);
  if (principal.kind === "user") return principal.subject;
  if (principal.user) return principal.user;
  throw forbidden("Connections belong to users: call /connections with a user token");
}

function appOf(req: Request): AppName {
  const app = String(req.params.app);
  if (!isAppName(app)) throw appNotFound(app);
  return app;
}

/**
 * A refusal of the integrations service as the crew API answers it, keeping its 4xx (unreachable is an
 * IntegrationsUnavailable, which the error mapper answers 503).
 */
async function through<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof IntegrationsRefused) {
      if (error.status === 404) throw new ApiError(404, "App not available", error.message);
      if (error.status === 400) throw badRequest(error.message);
      throw new ApiError(error.status, "Integrations refused", error.message);
    }
    throw error;
  }
}

function connectionOf(app: AppName, connections: IntegrationsConnection[]): IntegrationsConnection | undefined {
  const { provider, product } = appCatalogue[app];
  return connections.find((c) => c.provider === provider && c.product === product);
}

function view(app: AppName, connection: IntegrationsConnection | undefined): AppConnection {
  if (!connection) return { app, connected: false, status: "not_connected", account: null, scopes: [] };
  const active = connection.status === "active";
  return {
    app,
    connected: active,
    status: active ? "connected" : "reauthorization_required",
    account: { email: connection.account.email ?? null },
    scopes: connection.scopes,
  };
}

/**
 * A user's connected apps on the crew API (user tokens): `GET /connections` (every app, connected or not),
 * `POST /connections/{app}` (a connect link for the user's browser), `DELETE /connections/{app}`. Each goes to the
 * integrations service's internal API with the internal key, which no client ever sees.
 */
export function connectionsRoutes(deps: ConnectionsDeps): Router {
  const router = Router();
  const auth = bearerAuth(deps.tokens, deps.sessions);
  const integrations = () => {
    if (!deps.integrations) throw notConfigured();
    return deps.integrations;
  };

  router.get("/connections", auth, async (req, res) => {
    const user = userOf(req);
    const client = integrations();
    const connections = await through(() => client.connections(user));
    res.set("Cache-Control", "no-store");
    res.json({ connections: appNames.map((app) => view(app, connectionOf(app, connections))) });
  });

  router.post("/connections/:app", auth, async (req, res) => {
    const user = userOf(req);
    const app = appOf(req);
    const client = integrations();
    const body = parseOr400(connectRequest, req.body ?? {}, "connect request");
    const returnUrl = body.returnUrl ?? `${req.protocol}://${req.get("host")}/console/`;
    const { provider, product } = appCatalogue[app];
    const session = await through(() => client.connectSession({ userId: user, provider, product, returnUrl }));
    res.set("Cache-Control", "no-store");
    res.json({ url: session.url, ...(session.expiresAt ? { expiresAt: session.expiresAt } : {}) });
  });

  router.delete("/connections/:app", auth, async (req, res) => {
    const user = userOf(req);
    const app = appOf(req);
    const client = integrations();
    const connection = connectionOf(app, await through(() => client.connections(user)));
    if (!connection) throw new ApiError(404, "Not connected", `${app} is not connected for this user`);
    await through(() => client.deleteConnection(connection.id));
    res.json({ app, deleted: true });
  });

  refuseWrongMethods(router);
  return router;
}
