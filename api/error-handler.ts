import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../core/logger.ts";
import { errorMapper } from "../platform/http/error-mapper.ts";
import { ApiError } from "./errors.ts";

/** 404 for every route the API does not have, in the documented body. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError(404, "Not Found", `No route for ${req.method} ${req.path}`));
};

/** The API's messages for the one error mapper (platform/http/error-mapper.ts). */
export function errorHandler(log: Logger, bodyLimitBytes: number): ErrorRequestHandler {
  return errorMapper({
    log,
    // The limit of the parser that refused it: routers parse with their own (/admin 16 KiB, /console/sign-in 4 KiB).
    tooLarge: (limit) => `Request body is larger than the ${limit ?? bodyLimitBytes} byte limit`,
    notJson: "Request body is not valid JSON",
    internal: "An unexpected error occurred",
  });
}
