import { z } from "zod";
import type { ExtraPaths } from "../openapi.ts";

const tokenRequest = z
  .object({
    grant_type: z.literal("client_credentials"),
    scope: z
      .string()
      .optional()
      .meta({ description: "Accepted and ignored: tokens carry the client's crews and role" }),
  })
  .meta({ id: "TokenRequest" });

const tokenResponse = z
  .object({
    access_token: z.string().meta({ description: "Opaque bearer token for the crew API (prefix kca_)" }),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int().meta({ description: "Seconds until the token expires" }),
  })
  .meta({ id: "TokenResponse" });

const oauthError = z
  .object({
    error: z.enum([
      "invalid_request",
      "invalid_client",
      "unsupported_grant_type",
      "temporarily_unavailable",
      "server_error",
    ]),
    error_description: z.string(),
  })
  .meta({ id: "OAuthError" });

const noStore = { "Cache-Control": z.literal("no-store"), Pragma: z.literal("no-cache") };
const answer = (description: string, schema: z.ZodType, headers: Record<string, z.ZodType> = {}) => ({
  description,
  headers: z.object({ ...noStore, ...headers }),
  content: { "application/json": { schema } },
});
const retryAfter = { "Retry-After": z.string().meta({ description: "Seconds to wait" }) };

/** The token endpoint in the OpenAPI document (prefix: where it is mounted). */
export function tokenEndpointPaths(prefix = ""): ExtraPaths {
  return {
    [`${prefix}/oauth/token`]: {
      post: {
        operationId: "issueToken",
        tags: ["oauth"],
        summary: "Exchange client credentials for an access token (OAuth 2.0 client credentials grant)",
        description:
          "Authenticate the client with HTTP Basic: base64 of `client_id:client_secret`, each form-urlencoded " +
          "first (RFC 6749 §2.3.1). Send `grant_type=client_credentials` as application/x-www-form-urlencoded. " +
          "Limited per source address, per client_id at each source address, and per client; a failed " +
          "authentication counts several times, against the address it came from only (another address's " +
          "wrong secrets never lock the client out).",
        security: [],
        requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: tokenRequest } } },
        responses: {
          "200": answer("Access token", tokenResponse),
          "400": answer(
            "invalid_request (missing grant_type, a repeated parameter, wrong content type, a body too large or not " +
              "valid for its Content-Encoding, a malformed %-escape in the path) or unsupported_grant_type",
            oauthError,
          ),
          "401": answer("invalid_client", oauthError, {
            "WWW-Authenticate": z.string().meta({ example: 'Basic realm="kubecrew"' }),
          }),
          "405": answer("invalid_request: the endpoint takes POST only", oauthError, {
            Allow: z.literal("POST"),
          }),
          "429": answer("temporarily_unavailable: rate limited", oauthError, retryAfter),
          "500": answer("server_error: an unexpected failure; the body says nothing internal", oauthError),
          "503": answer("temporarily_unavailable: the token store is unreachable", oauthError, retryAfter),
        },
      },
    },
  };
}
