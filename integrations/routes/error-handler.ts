import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../../core/logger.ts";
import { IntegrationError } from "../errors.ts";
import { errorPage } from "../error-page.ts";
import { TamperedCiphertextError } from "../token-cipher.ts";
import { requestFault } from "../../platform/http/request-faults.ts";
import { isRedisUnavailable } from "../../platform/redis-client.ts";

/** Browser routes set this so failures render as a page instead of JSON. */
export const rendersPages: RequestHandler = (_req, res, next) => {
  res.locals["page"] = true;
  next();
};

interface Answer {
  status: number;
  type: string;
  message: string;
  expected: boolean;
  headers?: Record<string, string>;
}

function describe(error: unknown, contentEncoding: string | undefined): Answer {
  if (error instanceof IntegrationError)
    return { status: error.status, type: error.type, message: error.message, expected: true, headers: error.headers };
  const fault = requestFault(error, contentEncoding);
  if (fault) {
    const type = fault.status === 415 ? "Unsupported Media Type" : "Bad Request";
    return { status: fault.status, type, message: fault.message, expected: true };
  }
  if (error instanceof TamperedCiphertextError) {
    return {
      status: 500,
      type: "Stored token unreadable",
      message: "The stored tokens of this connection failed their integrity check and were not used; connect it again",
      expected: false,
    };
  }
  if (isRedisUnavailable(error)) {
    return {
      status: 503,
      type: "Service Unavailable",
      message: "The connection store (Redis) is unreachable; try again shortly",
      // Logged once per outage by the Redis client, not once per request.
      expected: true,
      headers: { "Retry-After": "5" },
    };
  }
  const status = (error as { status?: unknown; type?: unknown }).status;
  const bodyParserType = (error as { type?: unknown }).type;
  if (status === 413)
    return { status: 413, type: "Payload Too Large", message: "Request bodies are limited to 10 MB", expected: true };
  if (status === 400 && bodyParserType === "entity.parse.failed")
    return { status: 400, type: "Bad Request", message: "The request body is not valid JSON", expected: true };
  return {
    status: 500,
    type: "Internal Server Error",
    message: "Something went wrong on our side; it has been logged",
    expected: false,
  };
}

/** Maps domain errors to `{error, message}` (or a page); anything unexpected is logged once and answered without details. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const { status, type, message, expected, headers } = describe(error, req.headers["content-encoding"]);
    if (!expected) {
      logger.error(
        {
          err:
            error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
          method: req.method,
          path: req.path,
        },
        "Request failed",
      );
    }
    if (res.headersSent) return;
    if (headers) res.set(headers);
    if (res.locals["page"]) {
      const title =
        status === 403
          ? "This account cannot be connected"
          : status >= 500
            ? "Connecting failed"
            : "This sign-in cannot continue";
      res
        .status(status)
        .type("html")
        .send(errorPage(status, title, message));
      return;
    }
    res.status(status).json({ error: type, message });
  };
}
