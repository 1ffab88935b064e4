import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../core/logger.ts";
import { requestFault } from "../platform/http/request-faults.ts";
import { ApiError } from "./errors.ts";

const statusError = (status: number) => (status === 415 ? "Unsupported Media Type" : "Bad Request");

/** 404 for every route the API does not have, in the documented body. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, "Not Found", `No route for ${req.method} ${req.path}`));
};

/**
 * The one place errors become responses. Known errors answer their documented body; body-parser errors become
 * 400/413; anything else is logged once and answers a bare 500.
 */
export function errorHandler(log: Logger, bodyLimitBytes: number): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const fault = requestFault(err, req.headers["content-encoding"]);
    if (fault) log.debug({ method: req.method, reason: fault.message }, "Refused a malformed request");
    const error = fault
      ? new ApiError(fault.status, statusError(fault.status), fault.message)
      : toApiError(err, bodyLimitBytes);
    if (!error) {
      log.error({ err, method: req.method, path: req.path }, "Unexpected error answering a request");
    }
    const answer = error ?? new ApiError(500, "Internal Server Error", "An unexpected error occurred");
    if (res.headersSent) return;
    res.status(answer.status).set(answer.headers).json(answer.body);
  };
}

function toApiError(err: unknown, bodyLimitBytes: number): ApiError | undefined {
  if (err instanceof ApiError) return err;
  const type = (err as { type?: string } | null)?.type;
  if (type === "entity.too.large") {
    // The limit of the parser that refused it: routers parse with their own (/admin 16 KiB, /console/sign-in 4 KiB).
    const limit = (err as { limit?: unknown }).limit;
    const bytes = typeof limit === "number" ? limit : bodyLimitBytes;
    return new ApiError(413, "Payload Too Large", `Request body is larger than the ${bytes} byte limit`);
  }
  if (type === "entity.parse.failed") return new ApiError(400, "Bad Request", "Request body is not valid JSON");
  return undefined;
}
