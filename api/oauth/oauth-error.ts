import { KubecrewError } from "../../core/errors.ts";

/** An error answer of the token endpoint (RFC 6749 §5.2): `{error, error_description}`. */
export class OAuthError extends KubecrewError {
  readonly code = "oauth_error";
  readonly status: number;
  readonly error: string;
  readonly headers: Record<string, string>;

  constructor(status: number, error: string, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.name = "OAuthError";
    this.status = status;
    this.error = error;
    this.headers = headers;
  }

  get body() {
    return { error: this.error, error_description: this.message };
  }
}

export const invalidRequest = (description: string) => new OAuthError(400, "invalid_request", description);

export const unsupportedGrantType = (grantType: string) =>
  new OAuthError(400, "unsupported_grant_type", `grant_type "${grantType}" is not supported; use client_credentials`);

export const invalidClient = (realm: string, description = "Client authentication failed") =>
  new OAuthError(401, "invalid_client", description, { "WWW-Authenticate": `Basic realm="${realm}"` });

export const rateLimited = (retryAfterSeconds: number) =>
  new OAuthError(429, "temporarily_unavailable", `Too many token requests; retry after ${retryAfterSeconds} seconds`, {
    "Retry-After": String(retryAfterSeconds),
  });

export const storeUnavailable = (retryAfterSeconds = 5) =>
  new OAuthError(503, "temporarily_unavailable", "The token service cannot reach its store; retry shortly", {
    "Retry-After": String(retryAfterSeconds),
  });
