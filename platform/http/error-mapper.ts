import type { ErrorRequestHandler, Response } from "express";
import { DependencyUnavailable } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { HttpError } from "./http-error.ts";
import { requestFault } from "./request-faults.ts";

/** What a service says in the bodies the mapper writes for it (each service's are documented). */
export interface ErrorMapperOptions {
  log: Logger;
  /** A body parser's refusal of a body over `limit` bytes (the parser's own limit, when it says). */
  tooLarge(limit: number | undefined): string;
  /** A body parser's refusal of a body that is not JSON. */
  notJson: string;
  /** The message of a 500: never the error's own. */
  internal: string;
  /**
   * The service's errors that are not HttpErrors (a store that is down, a tampered ciphertext): the answer, and
   * whether it is unexpected (logged once here).
   */
  known?(err: unknown): { answer: HttpError; unexpected?: boolean } | undefined;
  /** Answers the error in another form (a page for a browser route); false: the JSON body. */
  render?(res: Response, answer: HttpError): boolean;
}

const faultError = (status: number) => (status === 415 ? "Unsupported Media Type" : "Bad Request");

/**
 * The one place errors become responses, for every service, by class: an HttpError answers its documented body and
 * headers; a DependencyUnavailable answers 503 with its answer and Retry-After (the dependency logs its outage, not
 * each request); a request fault (bad encoding, deep JSON) and a body parser's refusal answer 4xx; anything else is
 * logged once with the request's method and path and answers a bare 500.
 */
export function errorMapper(options: ErrorMapperOptions): ErrorRequestHandler {
  const { log } = options;
  return (err, req, res, _next) => {
    const { answer, unexpected } = map(err, req.headers["content-encoding"], options);
    if (unexpected) {
      const logged = err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err);
      log.error({ err: logged, method: req.method, path: req.path }, "Unexpected error answering a request");
    }
    if (res.headersSent) return;
    res.set(answer.headers);
    if (options.render?.(res, answer)) return;
    res.status(answer.status).json(answer.body);
  };
}

function map(
  err: unknown,
  contentEncoding: string | undefined,
  options: ErrorMapperOptions,
): { answer: HttpError; unexpected: boolean } {
  if (err instanceof HttpError) return { answer: err, unexpected: false };
  if (err instanceof DependencyUnavailable) {
    const headers = { "Retry-After": String(err.retryAfterSeconds) };
    return { answer: new HttpError(503, "Service Unavailable", err.answer, { headers }), unexpected: false };
  }
  const fault = requestFault(err, contentEncoding);
  if (fault) {
    options.log.debug({ reason: fault.message }, "Refused a malformed request");
    return { answer: new HttpError(fault.status, faultError(fault.status), fault.message), unexpected: false };
  }
  const known = options.known?.(err);
  if (known) return { answer: known.answer, unexpected: known.unexpected ?? false };
  const type = (err as { type?: unknown } | null)?.type;
  if (type === "entity.too.large") {
    const limit = (err as { limit?: unknown }).limit;
    const answer = new HttpError(
      413,
      "Payload Too Large",
      options.tooLarge(typeof limit === "number" ? limit : undefined),
    );
    return { answer, unexpected: false };
  }
  if (type === "entity.parse.failed") {
    return { answer: new HttpError(400, "Bad Request", options.notJson), unexpected: false };
  }
  return { answer: new HttpError(500, "Internal Server Error", options.internal), unexpected: true };
}
