import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerToken } from "./auth/bearer.ts";
import { mayUseCrew } from "./auth/principal.ts";
import type { TokenStore } from "./auth/token-store.ts";
import type { ExecutionBackend } from "./execution-backend.ts";
import { mayRead } from "./routes/listings.ts";
import { STATUS_CONTENT_TYPE, statusBody } from "./routes/status-body.ts";

const ID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** `/crews/{crew}/status/{id}` and `/crews/{crew}/{id}/status`, as clients send them (no query, nothing encoded). */
const CREW_POLL = new RegExp(`^/crews/([a-z0-9][a-z0-9.-]*)/(?:status/(${ID})|(${ID})/status)$`);
/** `/status/{id}` and `/{id}/status` of the default crew. */
const DEFAULT_CREW_POLL = new RegExp(`^/(?:status/(${ID})|(${ID})/status)$`);

/** Answers a request, or says it did not (false): the app then routes it. */
export type StatusPolls = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * `GET /status` polls answered before any routing, when everything the answer needs is at hand at once: a bearer
 * token the token store vouches for without waiting (verified a moment ago), the crew and the execution held by the
 * backend (the informer caches), and the execution's cached body. Every other request, and a poll missing any of
 * these (an unknown or revoked token, an execution another user started, one not in the cache yet, a request with a
 * body or conditional headers, an encoded or unusual path), goes through the app as before, which answers it (its
 * 401, 404, read-through, errors) exactly as it always did: this answers only what the app would answer 200 with
 * these bytes and headers. Polling is most of the API's traffic; this spares each poll express's routing through
 * every router mounted before the crew routes, the awaits between middlewares and the response helpers.
 * Undefined when the backend or the token store cannot tell anything at once.
 */
export function statusPolls(deps: {
  backend: ExecutionBackend;
  tokens: TokenStore;
  defaultCrew?: string;
}): StatusPolls | undefined {
  const { backend, tokens, defaultCrew } = deps;
  if (!backend.heldCrew || !backend.heldExecution || !tokens.verifyAtOnce) return undefined;
  const heldCrew = backend.heldCrew.bind(backend);
  const heldExecution = backend.heldExecution.bind(backend);
  const verifyAtOnce = tokens.verifyAtOnce.bind(tokens);

  /** The crew and execution id a poll names, if the request is a plain poll. */
  const target = (req: IncomingMessage): { crew: string; id: string } | undefined => {
    if (req.method !== "GET") return undefined;
    const url = req.url ?? "";
    const byCrew = CREW_POLL.exec(url);
    if (byCrew) return { crew: byCrew[1]!, id: (byCrew[2] ?? byCrew[3])! };
    if (defaultCrew === undefined) return undefined;
    const atRoot = DEFAULT_CREW_POLL.exec(url);
    return atRoot ? { crew: defaultCrew, id: (atRoot[1] ?? atRoot[2])! } : undefined;
  };

  const answer: StatusPolls = (req, res) => {
    const poll = target(req);
    if (!poll) return false;
    const { headers } = req;
    // A body is parsed (and may be refused) by the app's JSON parser; conditional requests are judged by express.
    if (
      headers["content-length"] !== undefined ||
      headers["transfer-encoding"] !== undefined ||
      headers["if-none-match"] !== undefined ||
      headers["if-modified-since"] !== undefined
    ) {
      return false;
    }
    // No Authorization header: a console session, judged by the app.
    const token = bearerToken(headers.authorization);
    const principal = token === undefined ? undefined : verifyAtOnce(token);
    if (!principal || !mayUseCrew(principal, poll.crew)) return false;
    const crew = heldCrew(poll.crew);
    const execution = crew && heldExecution(crew.metadata.name, poll.id);
    if (!crew || !execution || !mayRead(principal, execution)) return false;
    const body = statusBody(execution, crew);
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
