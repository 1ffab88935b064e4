import express, { Router, type Request, type RequestHandler } from "express";
import type { IncomingMessage, ServerResponse } from "node:http";
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
export const STATUS_PATHS = ["/crews/:crew/status/:id", "/crews/:crew/:id/status", "/status/:id", "/:id/status"];

/**
 * The same paths as express's router matches them (case-insensitive, a trailing slash allowed), for the cache's answer
 * before routing; a segment with an escape or anything unusual is left to the router, which decodes it.
 */
const STATUS_PATTERNS = STATUS_PATHS.map(
  (path) => new RegExp(`^${path.replace(/:(\w+)/g, "(?<$1>[\\w.-]+)")}/?$`, "i"),
);

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

  const held = heldStatus(deps);
  const fromCache: RequestHandler = (req, res, next) => {
    const body = held?.(crewName(req), String(req.params["id"]), req.headers.authorization);
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

/**
 * The status route's cache, asked before express routes a request: a plain `GET` of one of the route's paths that
 * the cache answers at once (see heldStatus) is answered here, with the bytes and headers the route would send;
 * anything else — another method, a body to parse, a query, an escaped path, a poll the cache cannot answer — answers
 * false and goes through the app, whose status route judges it as always. Polling is most of the API's traffic: this
 * spares each poll express's routing, which in the API's process (busy with its watches and Redis) costs about a
 * third of a poll's CPU (bench/README.md, issue 29). Undefined when the backend or token store cannot answer at once.
 */
export function statusBeforeRouting(
  deps: StatusRouteDeps,
): ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined {
  const held = heldStatus(deps);
  if (!held) return undefined;
  const answer = (req: IncomingMessage, res: ServerResponse): boolean => {
    const { headers, url } = req;
    if (req.method !== "GET" || url === undefined) return false;
    if (headers["content-length"] !== undefined || headers["transfer-encoding"] !== undefined) return false;
    const params = matchStatusPath(url);
    const crew = params?.["crew"] ?? deps.defaultCrew;
    const body = params && crew !== undefined && held(crew, params["id"]!, headers.authorization);
    if (!body) return false;
    res.writeHead(200, { "Content-Type": STATUS_CONTENT_TYPE, "Content-Length": body.bytes });
    res.end(body.json);
    return true;
  };
  // Anything unexpected is the app's to answer (its error handler logs it and answers 500).
  return (req, res) => {
    try {
      return answer(req, res);
    } catch {
      return res.headersSent;
    }
  };
}

function matchStatusPath(url: string): Record<string, string> | undefined {
  for (const pattern of STATUS_PATTERNS) {
    const groups = pattern.exec(url)?.groups;
    if (groups) return groups;
  }
  return undefined;
}

/** The cache's answer to a poll, when the token, crew and execution are all held; else undefined. */
function heldStatus(
  deps: StatusRouteDeps,
): ((crew: string | undefined, id: string, authorization: string | undefined) => StatusBody | undefined) | undefined {
  const { backend, tokens } = deps;
  if (!backend.heldCrew || !backend.heldExecution || !tokens.verifyAtOnce) return undefined;
  const heldCrew = backend.heldCrew.bind(backend);
  const heldExecution = backend.heldExecution.bind(backend);
  const verifyAtOnce = tokens.verifyAtOnce.bind(tokens);
  return (name, id, authorization) => {
    // No Authorization header: a console session, judged by bearerAuth.
    const token = bearerToken(authorization);
    if (name === undefined || token === undefined || !EXECUTION_ID.test(id)) return undefined;
    const principal = verifyAtOnce(token);
    if (!principal || !mayUseCrew(principal, name)) return undefined;
    const crew = heldCrew(name);
    const execution = crew && heldExecution(crew.metadata.name, id.toLowerCase());
    if (!crew || !execution || !mayRead(principal, execution)) return undefined;
    return statusBody(execution, crew, deps.prices);
  };
}
