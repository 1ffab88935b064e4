import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../../core/logger.ts";
import { errorPage } from "../error-page.ts";
import { TamperedCiphertextError } from "../token-cipher.ts";
import { errorMapper } from "../../platform/http/error-mapper.ts";
import { HttpError } from "../../platform/http/http-error.ts";
import { isRedisUnavailable } from "../../platform/redis-client.ts";

/** Browser routes set this so failures render as a page instead of JSON. */
export const rendersPages: RequestHandler = (_req, res, next) => {
  res.locals["page"] = true;
  next();
};

function known(error: unknown): { answer: HttpError; unexpected?: boolean } | undefined {
  if (error instanceof TamperedCiphertextError) {
    const message =
      "The stored tokens of this connection failed their integrity check and were not used; connect it again";
    return { answer: new HttpError(500, "Stored token unreadable", message), unexpected: true };
  }
  if (isRedisUnavailable(error)) {
    const message = "The connection store (Redis) is unreachable; try again shortly";
    // Logged once per outage by the Redis client, not once per request.
    return { answer: new HttpError(503, "Service Unavailable", message, { headers: { "Retry-After": "5" } }) };
  }
  return undefined;
}

/** The service's messages for the one error mapper (platform/http/error-mapper.ts); browser routes get a page. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return errorMapper({
    log: logger,
    known,
    tooLarge: () => "Request bodies are limited to 10 MB",
    notJson: "The request body is not valid JSON",
    internal: "Something went wrong on our side; it has been logged",
    render: (res, { status, message }) => {
      if (!res.locals["page"]) return false;
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
      return true;
    },
  });
}
