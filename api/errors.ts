import type { ErrorBody } from "../core/api-bodies.ts";
import { refusalMessage, type McpUrlRefusal } from "../core/mcp-url-refusals.ts";
import { HttpError } from "../platform/http/http-error.ts";

/** An error the crew API answers with its documented body: `{error, message, details?}`. */
export class ApiError extends HttpError {
  override name = "ApiError";
  declare readonly body: ErrorBody;

  constructor(status: number, error: string, message: string, details?: unknown, headers: Record<string, string> = {}) {
    super(status, error, message, { details, headers });
  }
}

export const badRequest = (message: string, details?: unknown) => new ApiError(400, "Bad Request", message, details);

export const unauthorized = () =>
  new ApiError(401, "Unauthorized", "Invalid or missing bearer token", undefined, { "WWW-Authenticate": "Bearer" });

export const forbidden = (message: string) => new ApiError(403, "Forbidden", message);
export const csrfRefused = () =>
  forbidden("Missing or invalid CSRF token: send the console session's X-CSRF-Token header");

export const executionNotFound = (id: string) =>
  new ApiError(404, "Execution not found", `No execution found with ID: ${id}`);

export const crewNotFound = (crew: string) => new ApiError(404, "Crew not found", `No crew named "${crew}"`);

export const missingInputs = (missing: string[]) =>
  new ApiError(422, "Unprocessable Entity", `Missing required inputs: ${missing.join(", ")}`, {
    missing_inputs: missing,
  });

/** A crew whose MCP server URLs the runner's outbound policy refuses: its tools could never be called. */
export const mcpServersRefused = (crew: string, refusals: McpUrlRefusal[]) =>
  new ApiError(422, "Unprocessable Entity", `Crew "${crew}" cannot run: ${refusals.map(refusalMessage).join("; ")}`, {
    mcp_servers: refusals.map((r) => ({ field: r.field, server: r.server, url: r.url, reason: r.reason })),
  });

export const idempotencyKeyReused = () =>
  new ApiError(
    422,
    "Unprocessable Entity",
    "This Idempotency-Key was used within the last 24 hours for a kickoff with a different body; " +
      "send a new key for a new kickoff",
    { idempotency_key: "reused with a different request body" },
  );

export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new ApiError(429, "Too Many Requests", message, undefined, { "Retry-After": String(retryAfterSeconds) });

export const serviceUnavailable = (message: string, retryAfterSeconds = 5) =>
  new ApiError(503, "Service Unavailable", message, undefined, { "Retry-After": String(retryAfterSeconds) });
