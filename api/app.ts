import express, { Router, type Express } from "express";
import { refuseDeepJson } from "../platform/http/json-depth.ts";
import type { Logger } from "../core/logger.ts";
import { runnerPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import type { SessionAuth } from "./auth/session-auth.ts";
import type { TokenStore } from "./auth/token-store.ts";
import type { IntegrationsClient } from "./connections/integrations-client.ts";
import { connectionsPaths } from "./connections/openapi-paths.ts";
import { connectionsRoutes } from "./connections/routes.ts";
import { errorHandler, notFoundHandler } from "./error-handler.ts";
import type { ExecutionBackend } from "./execution-backend.ts";
import type { FlowBackend } from "./flow-backend.ts";
import type { LlmPrices } from "../core/usage.ts";
import { flowPaths } from "./flow-openapi-paths.ts";
import { openApiDocument, type ExtraPaths } from "./openapi.ts";
import { crewListRoutes } from "./routes/crew-list.ts";
import { crewRoutes } from "./routes/crew-routes.ts";
import { flowRoutes } from "./routes/flow-routes.ts";
import { integrationsFallback } from "./routes/integrations-fallback.ts";
import { STATUS_PATHS, statusRoute } from "./routes/status-route.ts";
import { ApiMetrics } from "./metrics.ts";
import { refuseWrongMethods } from "../platform/http/wrong-methods.ts";

export interface ApiDeps {
  backend: ExecutionBackend;
  /** Declarative CrewAI flows, at `/flows/{flow}/…` (`kubecrew dev`). */
  flows?: FlowBackend;
  tokens: TokenStore;
  log: Logger;
  /** The crew served at the root paths (`/inputs`, `/kickoff`, …); every crew is also at `/crews/{crew}/…`. */
  defaultCrew?: string;
  bodyLimitBytes: number;
  /** Prices of the models, for `usage.cost_usd` in /status and the event stream (KUBECREW_LLM_PRICES). */
  prices?: LlmPrices;
  /** The outbound URL policy kickoff checks webhook URLs against. */
  outboundPolicy: OutboundPolicy;
  /**
   * The policy the task runner applies to MCP servers (kickoff refuses a crew whose MCP URLs it refuses); the task
   * pods' (runnerPolicy) unless given: `kubecrew dev` passes its task processes'.
   */
  toolOutboundPolicy?: OutboundPolicy;
  /** Routers other components mount before the crew routes (the token endpoint, the admin API). */
  extraRouters?: Router[];
  /**
   * The web console (`/console/`): its router, mounted before the crew routes, and its sessions, which the crew
   * routes accept beside bearer tokens (with a CSRF token on state-changing requests).
   */
  console?: { router: Router; sessions: SessionAuth };
  extraPaths?: ExtraPaths;
  /** Ingress trust for req.ip (the rate limiter keys on it): a hop count, or false. */
  trustProxy?: number | boolean;
  /** The integrations service's internal API, for `/connections`; absent: those routes say it is not configured. */
  integrations?: IntegrationsClient;
  /** Whether the API can serve (its token store reachable): `/readyz` answers 503 while it is not. */
  ready?: () => Promise<boolean> | boolean;
  /** The request, kickoff and event-stream metrics (`kubecrew api`'s; absent: none counted). */
  metrics?: ApiMetrics;
}

/** Every crew's routes are mounted under it; the default crew's at the root. */
const CREW_MOUNT = "/crews/:crew";
const CONSOLE_MOUNT = "/console";

/** The API's metrics, naming requests by this app's route templates. */
export function apiMetrics(): ApiMetrics {
  return new ApiMetrics({ mounts: [CREW_MOUNT, CONSOLE_MOUNT], statusRoute: STATUS_PATHS[0]! });
}

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.trustProxy ?? false);
  const sessions = deps.console ? { sessions: deps.console.sessions } : {};
  // First: polls are most of the API's traffic, and no other router has a path of this shape.
  app.use(
    statusRoute({
      backend: deps.backend,
      tokens: deps.tokens,
      ...sessions,
      ...(deps.defaultCrew !== undefined ? { defaultCrew: deps.defaultCrew } : {}),
      bodyLimitBytes: deps.bodyLimitBytes,
      ...(deps.prices ? { prices: deps.prices } : {}),
    }),
  );

  const document = JSON.stringify(
    openApiDocument({ ...connectionsPaths, ...(deps.flows ? flowPaths : {}), ...deps.extraPaths }),
  );
  const service = Router();
  service.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(document);
  });
  service.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  service.get("/readyz", async (_req, res) => {
    const ready = (await deps.ready?.()) ?? true;
    res.status(ready ? 200 : 503).json({ status: ready ? "ok" : "unavailable" });
  });
  refuseWrongMethods(service);
  app.use(service);
  // Extra routers parse their own bodies (the token endpoint takes forms and must answer even a broken JSON body in
  // OAuth's error format), so they come before the crew routes' JSON parser.
  for (const router of deps.extraRouters ?? []) app.use(router);
  if (deps.console) app.use(CONSOLE_MOUNT, deps.console.router);
  app.use(express.json({ limit: deps.bodyLimitBytes, verify: refuseDeepJson }));
  app.use(integrationsFallback());
  app.use(connectionsRoutes({ tokens: deps.tokens, integrations: deps.integrations, ...sessions }));

  if (deps.flows) {
    app.use(flowRoutes({ flows: deps.flows, tokens: deps.tokens, ...sessions, outboundPolicy: deps.outboundPolicy }));
  }
  app.use(crewListRoutes({ backend: deps.backend, tokens: deps.tokens, ...sessions }));
  const metrics = deps.metrics ? { metrics: deps.metrics } : {};
  app.use(
    CREW_MOUNT,
    crewRoutes({
      backend: deps.backend,
      tokens: deps.tokens,
      ...sessions,
      outboundPolicy: deps.outboundPolicy,
      toolOutboundPolicy: deps.toolOutboundPolicy ?? runnerPolicy,
      crewName: (req) => String(req.params.crew),
      ...(deps.prices ? { eventStream: { prices: deps.prices } } : {}),
      ...metrics,
    }),
  );
  app.use(
    crewRoutes({
      backend: deps.backend,
      tokens: deps.tokens,
      ...sessions,
      outboundPolicy: deps.outboundPolicy,
      toolOutboundPolicy: deps.toolOutboundPolicy ?? runnerPolicy,
      crewName: () => deps.defaultCrew,
      ...(deps.prices ? { eventStream: { prices: deps.prices } } : {}),
      ...metrics,
    }),
  );
  app.use(notFoundHandler);
  app.use(errorHandler(deps.log, deps.bodyLimitBytes));
  return app;
}
