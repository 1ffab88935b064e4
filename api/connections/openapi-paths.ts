import { z } from "zod";
import { appNames } from "../../core/apps.ts";
import { errorBody } from "../../core/api-bodies.ts";
import { json, requestErrors } from "../openapi-responses.ts";
import type { ExtraPaths } from "../openapi.ts";
import { connectionsResponse, connectRequest, connectResponse, disconnectResponse } from "./bodies.ts";

const tags = ["connections"];
const app = z.object({
  app: z.enum(appNames as [string, ...string[]]).meta({ description: "The app, by CrewAI's name (e.g. gmail)" }),
});
const errors = {
  ...requestErrors,
  "401": json(errorBody, "Invalid or missing bearer token", { "WWW-Authenticate": z.literal("Bearer") }),
  "403": json(
    errorBody,
    "Not a user: connections belong to users (user tokens, or an org admin's console session as that person)",
  ),
  "503": json(errorBody, "The token store or the integrations service is down or not answering", {
    "Retry-After": z.string(),
  }),
};
const notFound = (what: string) =>
  json(errorBody, `${what}; or no integrations service configured (error "Connections not configured")`);

/** `/connections`: a user's connected apps (user tokens), through the integrations service. */
export const connectionsPaths: ExtraPaths = {
  "/connections": {
    get: {
      operationId: "listConnections",
      tags,
      summary: "The caller's connected apps",
      description: "Every app, connected or not, with the account's email and the scopes granted",
      responses: {
        "200": json(connectionsResponse, "Every app"),
        ...errors,
        "404": notFound("Never for a known user"),
      },
    },
  },
  "/connections/{app}": {
    post: {
      operationId: "connectApp",
      tags,
      summary: "A connect link for the caller's browser",
      requestParams: { path: app },
      requestBody: { content: { "application/json": { schema: connectRequest } } },
      responses: {
        "200": json(connectResponse, "Open url in the user's browser"),
        ...errors,
        "400": json(errorBody, "Malformed request, or a returnUrl the integrations service does not allow"),
        "404": notFound('Unknown app (error "App not found"), or its provider not configured ("App not available")'),
      },
    },
    delete: {
      operationId: "disconnectApp",
      tags,
      summary: "Disconnect an app (the grant is revoked at providers that can)",
      requestParams: { path: app },
      responses: {
        "200": json(disconnectResponse, "Disconnected"),
        ...errors,
        "404": notFound('Unknown app ("App not found"), or not connected ("Not connected")'),
      },
    },
  },
};
