import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../../core/logger.ts";
import { errorPage } from "../error-page.ts";
import { TamperedCiphertextError } from "../token-cipher.ts";
import { errorMapper } from "../../platform/http/error-mapper.ts";
import { HttpError } from "../../platform/http/http-error.ts";

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
