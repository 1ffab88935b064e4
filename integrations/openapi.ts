import { createDocument, type ZodOpenApiPathsObject } from "zod-openapi";
import { z } from "zod";
import { errorBody } from "../core/api-bodies.ts";
import { connectRequestSchema } from "./connect-sessions.ts";
import { connectionSchema } from "./connection-store.ts";
import { revokeAppCredentialSchema } from "./routes/apps.ts";
import { signInCookieName } from "./sign-in-cookie.ts";

/** One documented answer: a description and a JSON body, with the headers it carries. */
const json = (schema: z.ZodType, description: string, headers?: Record<string, z.ZodType>) => ({
  description,
  ...(headers ? { headers: z.object(headers) } : {}),
  content: { "application/json": { schema } },
});

/** A browser route's failure: an HTML page for the person mid-sign-in (or the JSON error body, see below). */
const page = (description: string) => ({
  description: `${description}. An HTML page; failures found before the route runs (the body) are the JSON error body`,
  content: { "text/html": { schema: z.string() }, "application/json": { schema: errorBody } },
});

const retryAfter = { "Retry-After": z.string().meta({ description: "Seconds to wait before trying again" }) };
const allow = { Allow: z.string().meta({ example: "GET, HEAD" }) };

/** What every route can answer whatever it does: an unusable request, a wrong method, an unexpected failure. */
const requestErrors = {
  "400": json(
    errorBody,
    "Bad request: malformed JSON or wrong fields, a body nested deeper than 64 levels, a body not valid for its " +
      "Content-Encoding, or a malformed %-escape in the path",
  ),
  "405": json(errorBody, "The path does not have this method; Allow lists the ones it has", allow),
  "413": json(errorBody, "Body above 10 MB"),
  "415": json(errorBody, "A Content-Encoding other than gzip, br or deflate"),
  "500": json(errorBody, "Unexpected failure; the body says nothing internal"),
};
const redisDown = json(errorBody, "The connection store (Redis) is down or not answering", retryAfter);
const internalErrors = {
  ...requestErrors,
  "401": json(errorBody, "Invalid or missing internal API key", { "WWW-Authenticate": z.string() }),
  "503": redisDown,
};
const pageErrors = {
  "400": page("A missing, wrong, expired or replayed link or state; or a malformed request"),
  "405": { ...page("The path does not have this method"), headers: z.object(allow) },
  "413": page("Body above 10 MB"),
  "415": page("A Content-Encoding other than gzip, br or deflate"),
  "500": page("Unexpected failure"),
  "503": { ...page("The connection store (Redis) is down or not answering"), headers: z.object(retryAfter) },
};

const healthBody = z
  .object({
    status: z.enum(["ok", "ready", "not ready"]),
    store: z
      .enum(["redis", "memory"])
      .meta({ description: "Where connections are kept: Redis, or memory (kubecrew dev)" }),
    redis: z
      .enum(["reachable", "unreachable"])
      .optional()
      .meta({ description: "Whether Redis answers; absent for a store in memory" }),
  })
  .meta({ id: "IntegrationsHealth" });
const providersBody = z
  .object({
    providers: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        products: z.array(z.object({ id: z.string(), name: z.string(), scopes: z.array(z.string()) })),
      }),
    ),
  })
  .meta({ id: "Providers" });
const connectSessionBody = z
  .object({ id: z.string(), url: z.string(), expiresAt: z.string() })
  .meta({ id: "ConnectSession" });
const accessTokenBody = z
  .object({
    access_token: z.string(),
    token_type: z.string(),
    expires_at: z.string().nullable(),
    expires_in: z.number().int().min(0).nullable(),
    scope: z.string(),
  })
  .meta({ id: "AccessToken" });
const connectionId = z.string().meta({ description: "A connection id (from the callback's redirect or a list)" });
const internal = { security: [{ internalApiKey: [] }], tags: ["internal"] };
const noStore = { "Cache-Control": z.literal("no-store") };

/** The MCP SDK's own refusals (a JSON-RPC error object) for requests that are not MCP messages. */
const jsonRpcError = z
  .object({ jsonrpc: z.literal("2.0"), error: z.object({ code: z.number(), message: z.string() }) })
  .loose()
  .meta({ id: "JsonRpcError" });

const paths: ZodOpenApiPathsObject = {
  "/health": {
    get: {
      operationId: "health",
      tags: ["service"],
      summary: "Liveness, always 200 while the process serves; reports Redis",
      security: [],
      responses: { "200": json(healthBody, "Alive"), ...requestErrors },
    },
  },
  "/ready": {
    get: {
      operationId: "ready",
      tags: ["service"],
      summary: "Readiness: 503 while Redis does not answer",
      security: [],
      responses: {
        "200": json(healthBody, "Ready"),
        ...requestErrors,
        "503": json(healthBody, "Not ready: Redis does not answer"),
      },
    },
  },
  "/openapi.json": {
    get: {
      operationId: "openApiDocument",
      tags: ["service"],
      summary: "This OpenAPI 3.1 document",
      security: [],
      responses: { "200": json(z.object({ openapi: z.string() }).loose(), "The document"), ...requestErrors },
    },
  },
  "/v1/connect/{sessionId}": {
    get: {
      operationId: "openConnectLink",
      tags: ["browser"],
      summary: "The connect link the user's browser opens (single use)",
      description:
        "Sets the signed sign-in cookie (the one-time state and the PKCE verifier) and redirects to the provider.",
      security: [],
      requestParams: { path: z.object({ sessionId: z.string().meta({ description: "From POST connect-sessions" }) }) },
      responses: {
        "303": {
          description: "To the provider's authorization endpoint",
          headers: z.object({ Location: z.string(), "Set-Cookie": z.string() }),
        },
        ...pageErrors,
        "404": page("The session's provider or product is not configured"),
      },
    },
  },
  "/v1/auth/{provider}/callback": {
    get: {
      operationId: "providerCallback",
      tags: ["browser"],
      summary: "The provider's redirect after the user signed in (or declined)",
      description:
        "Checks the state against the sign-in cookie and consumes it, exchanges the code with the PKCE verifier, " +
        "validates the ID token, stores the tokens and redirects to the return URL with status=connected (or " +
        "status=error when the user declined).",
      security: [{ signInCookie: [] }],
      requestParams: {
        path: z.object({
          provider: z.string().meta({ description: "google, microsoft, salesforce, hubspot, notion" }),
        }),
        query: z.object({
          code: z.string().optional(),
          state: z.string().optional(),
          error: z.string().optional(),
        }),
      },
      responses: {
        "303": {
          description: "To the return URL with status=connected&connection_id=…&provider=…&product=… or status=error",
          headers: z.object({ Location: z.string(), "Set-Cookie": z.string() }),
        },
        ...pageErrors,
        "403": page("An account outside the allowed domain or tenant (nothing is stored)"),
        "404": page("An unknown or unconfigured provider"),
        "502": page("The provider could not be reached"),
      },
    },
  },
  "/v1/connected": {
    get: {
      operationId: "connectedPage",
      tags: ["browser"],
      summary: "Where a tool's connect link returns the browser (unless KUBECREW_APPS_CONNECT_RETURN_URL is set)",
      security: [],
      requestParams: {
        query: z.object({
          status: z.string().optional(),
          provider: z.string().optional(),
          product: z.string().optional(),
          error: z.string().optional(),
        }),
      },
      responses: { "200": page("Says whether the app is now connected"), ...pageErrors },
    },
  },
  "/v1/mcp": {
    post: {
      operationId: "appsMcp",
      tags: ["apps"],
      summary: "The connected apps of one execution's user, as a streamable-HTTP MCP server (stateless)",
      description:
        "JSON-RPC MCP messages (initialize, tools/list, tools/call) with Authorization: Bearer <app credential>. " +
        "Lists only the tools of the credential's apps (`<app>__<action>`); a tool call acts as the credential's user " +
        "with their fresh access token. Provider failures, a missing connection (with a connect link) and a missing " +
        "scope are tool results with isError, not HTTP errors.",
      security: [{ appCredential: [] }],
      requestBody: {
        required: true,
        content: { "application/json": { schema: z.object({ jsonrpc: z.literal("2.0") }).loose() } },
      },
      responses: {
        "200": json(z.object({ jsonrpc: z.literal("2.0") }).loose(), "The JSON-RPC answer", noStore),
        "202": { description: "A notification or response was accepted" },
        ...requestErrors,
        "401": json(errorBody, "Missing, expired, forged or revoked app credential", {
          "WWW-Authenticate": z.string(),
        }),
        "400": json(
          z.union([errorBody, jsonRpcError]),
          `${requestErrors["400"].description}; or not a JSON-RPC message`,
        ),
        "406": json(jsonRpcError, "Accept must list application/json and text/event-stream"),
        "415": json(
          z.union([errorBody, jsonRpcError]),
          "Content-Type must be application/json; or an unknown encoding",
        ),
        "404": json(errorBody, "Apps not configured: the service has no KUBECREW_APPS_SIGNING_KEY"),
        "503": redisDown,
      },
    },
  },
  "/v1/internal/app-credentials/revoke": {
    post: {
      ...internal,
      operationId: "revokeAppCredential",
      summary: "Refuse an execution's app credential from now until it expires (the controller, when it finishes)",
      requestBody: { required: true, content: { "application/json": { schema: revokeAppCredentialSchema } } },
      responses: {
        "200": json(z.object({ revoked: z.literal(true) }), "Revoked", noStore),
        ...internalErrors,
      },
    },
  },
  "/v1/internal/providers": {
    get: {
      ...internal,
      operationId: "listProviders",
      summary: "The configured providers and products with their scopes",
      responses: { "200": json(providersBody, "Configured providers", noStore), ...internalErrors },
    },
  },
  "/v1/internal/connect-sessions": {
    post: {
      ...internal,
      operationId: "createConnectSession",
      summary: "Start connecting: a single-use link to send the user's browser to",
      requestBody: { required: true, content: { "application/json": { schema: connectRequestSchema } } },
      responses: {
        "201": json(connectSessionBody, "Send the user's browser to url", noStore),
        ...internalErrors,
        "400": json(errorBody, `${requestErrors["400"].description}; or returnUrl not on an allowed host`),
        "404": json(errorBody, "An unconfigured provider or product"),
      },
    },
  },
  "/v1/internal/users/{userId}/connections": {
    get: {
      ...internal,
      operationId: "listConnections",
      summary: "A user's connections, never a token",
      requestParams: { path: z.object({ userId: z.string() }) },
      responses: {
        "200": json(z.object({ connections: z.array(connectionSchema) }), "The user's connections", noStore),
        ...internalErrors,
      },
    },
  },
  "/v1/internal/connections/{id}": {
    get: {
      ...internal,
      operationId: "getConnection",
      summary: "One connection, never a token",
      requestParams: { path: z.object({ id: connectionId }) },
      responses: {
        "200": json(connectionSchema, "The connection", noStore),
        ...internalErrors,
        "404": json(errorBody, "No such connection"),
      },
    },
    delete: {
      ...internal,
      operationId: "deleteConnection",
      summary: "Revoke the grant where the provider can, then delete the connection",
      requestParams: { path: z.object({ id: connectionId }) },
      responses: {
        "200": json(z.object({ deleted: z.literal(true), revoked: z.boolean() }), "Deleted", noStore),
        ...internalErrors,
        "404": json(errorBody, "No such connection"),
      },
    },
  },
  "/v1/internal/connections/{id}/access-token": {
    post: {
      ...internal,
      operationId: "issueAccessToken",
      summary: "A fresh access token (refreshed first when it expires within the refresh-ahead window)",
      requestParams: { path: z.object({ id: connectionId }) },
      responses: {
        "200": json(accessTokenBody, "The access token", noStore),
        ...internalErrors,
        "400": json(errorBody, `${requestErrors["400"].description}; or the provider refused the refresh request`),
        "404": json(errorBody, "No such connection"),
        "409": json(errorBody, "Reauthorization required: the provider refused the refresh token"),
        "500": json(errorBody, "Unexpected failure, or a stored token failed its integrity check (never returned)"),
        "502": json(errorBody, "The provider could not be reached to refresh"),
        "503": json(
          errorBody,
          "Redis is down or not answering, or another replica's refresh did not finish in time",
          retryAfter,
        ),
      },
    },
  },
};

/** The integrations service's OpenAPI 3.1 document, from the zod schemas its routes validate with. */
export function integrationsOpenApiDocument() {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "kubecrew integrations service",
      version: "1.0.0",
      description:
        "Connects users' third-party accounts and hands out their access tokens to the rest of kubecrew. Every " +
        "path answers OPTIONS with 204 and Allow, and a method it does not have with 405 and Allow.",
    },
    components: {
      securitySchemes: {
        internalApiKey: { type: "http", scheme: "bearer", description: "KUBECREW_OAUTH_INTERNAL_API_KEY" },
        appCredential: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "An execution's app credential (core/app-credential.ts), minted by the controller",
        },
        signInCookie: { type: "apiKey", in: "cookie", name: signInCookieName },
      },
    },
    paths,
  });
}
