import express, { Router, type Request, type RequestHandler } from "express";
import { refuseDeepJson } from "../../platform/http/json-depth.ts";
import { bearerAuth, bearerToken } from "../auth/bearer.ts";
import { mayUseCrew } from "../auth/principal.ts";
import type { SessionAuth } from "../auth/session-auth.ts";
import type { TokenStore } from "../auth/token-store.ts";
import type { ExecutionBackend } from "../execution-backend.ts";
import { refuseWrongMethods } from "../../platform/http/wrong-methods.ts";
import { EXECUTION_ID } from "../../core/execution.ts";
import { crewAccess } from "./crew-access.ts";
import { mayRead } from "./listings.ts";
import type { LlmPrices } from "../../core/usage.ts";
import { STATUS_CONTENT_TYPE, statusBody, type StatusBody } from "./status-body.ts";

/** Every spelling of the one status endpoint: a crew's, and the default crew's at the root. */
const STATUS_PATHS = ["/crews/:crew/status/:id", "/crews/:crew/:id/status", "/status/:id", "/:id/status"];

export interface StatusRouteDeps {
  backend: ExecutionBackend;
  tokens: TokenStore;
  sessions?: SessionAuth;
  defaultCrew?: string;
  bodyLimitBytes: number;
  /** Prices of the models, for `usage.cost_usd` (KUBECREW_LLM_PRICES). */
  prices?: LlmPrices;
}

/**
 * `GET /status/{id}` (and its other spellings): the one route of the endpoint, mounted first because polling is most
 * of the API's traffic. Its cache answers at once what everything is at hand for — a bearer token the token store
 * verified a moment ago, the crew and execution held by the backend's caches, the execution's serialised body —
 * and anything else (a console session, a token to verify, an execution to read through) takes the awaited path,
 * with the same checks and the same bytes.
 */
export function statusRoute(deps: StatusRouteDeps): Router {
  const { backend, tokens } = deps;
  const crewName = (req: Request) => (req.params["crew"] === undefined ? deps.defaultCrew : String(req.params["crew"]));
  const access = crewAccess(backend, crewName);
  const router = Router();

  const held = heldStatus(deps, crewName);
  const fromCache: RequestHandler = (req, res, next) => {
    const body = held?.(req);
    if (!body) return next();
    res.writeHead(200, { "Content-Type": STATUS_CONTENT_TYPE, "Content-Length": body.bytes });
    res.end(body.json);
  };
  const fromBackend: RequestHandler = async (req, res) => {
    const crew = await access.crewFor(req);
    const execution = await access.visibleExecution(req, crew, String(req.params["id"]));
    res.type("application/json").send(statusBody(execution, crew, deps.prices).json);
  };
  // A GET's body is parsed (and refused) as on every other route.
  const body = express.json({ limit: deps.bodyLimitBytes, verify: refuseDeepJson });
  router.get(STATUS_PATHS, body, fromCache, bearerAuth(tokens, deps.sessions), fromBackend);
  refuseWrongMethods(router);
  return router;
}

/** The cache's answer to a request, when the token, crew and execution are all held; else undefined. */
function heldStatus(
  deps: StatusRouteDeps,
  crewName: (req: Request) => string | undefined,
): ((req: Request) => StatusBody | undefined) | undefined {
  const { backend, tokens } = deps;
  if (!backend.heldCrew || !backend.heldExecution || !tokens.verifyAtOnce) return undefined;
  const heldCrew = backend.heldCrew.bind(backend);
  const heldExecution = backend.heldExecution.bind(backend);
  const verifyAtOnce = tokens.verifyAtOnce.bind(tokens);
  return (req) => {
    const id = String(req.params["id"]);
    const name = crewName(req);
    // No Authorization header: a console session, judged by bearerAuth.
    const token = bearerToken(req.headers.authorization);
    if (name === undefined || token === undefined || !EXECUTION_ID.test(id)) return undefined;
    const principal = verifyAtOnce(token);
    if (!principal || !mayUseCrew(principal, name)) return undefined;
    const crew = heldCrew(name);
    const execution = crew && heldExecution(crew.metadata.name, id.toLowerCase());
    if (!crew || !execution || !mayRead(principal, execution)) return undefined;
    return statusBody(execution, crew, deps.prices);
  };
}
