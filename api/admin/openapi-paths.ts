import { z } from "zod";
import { errorBody } from "../../core/api-bodies.ts";
import type { ExtraPaths } from "../openapi.ts";
import { json, requestErrors } from "../openapi-responses.ts";
import { adminKeyHeader } from "./admin-key.ts";
import { clientList, createClientBody, createdClient, createdToken, createTokenBody, tokenList } from "./bodies.ts";

const adminKey = z.object({
  [adminKeyHeader]: z.string().meta({ description: "The admin key (KUBECREW_ADMIN_KEY)" }),
});
const errors = {
  ...requestErrors,
  "401": json(errorBody, `Missing or wrong ${adminKeyHeader}`),
  "429": json(errorBody, "Too many wrong admin keys from this address; refused before the key is compared", {
    "Retry-After": z.string().meta({ description: "Seconds to wait before trying again" }),
  }),
};
const common = { tags: ["admin"], security: [] };

/** The admin API in the OpenAPI document. */
export function adminPaths(): ExtraPaths {
  return {
    "/admin/tokens": {
      get: {
        ...common,
        operationId: "listTokens",
        summary: "List org and user tokens (ids and metadata; never the tokens)",
        requestParams: { header: adminKey },
        responses: { "200": json(tokenList, "Tokens that have not expired"), ...errors },
      },
      post: {
        ...common,
        operationId: "createToken",
        summary: "Create an org or user bearer token; the token is in this response only",
        requestParams: { header: adminKey },
        requestBody: { required: true, content: { "application/json": { schema: createTokenBody } } },
        responses: {
          "201": json(createdToken, "Created"),
          ...errors,
          "400": json(errorBody, "Invalid request; details name the fields"),
        },
      },
    },
    "/admin/tokens/{id}": {
      delete: {
        ...common,
        operationId: "revokeToken",
        summary: "Revoke a token by id",
        requestParams: { header: adminKey, path: z.object({ id: z.string() }) },
        responses: { "204": { description: "Revoked" }, "404": json(errorBody, "No such token"), ...errors },
      },
    },
    "/admin/clients": {
      get: {
        ...common,
        operationId: "listClients",
        summary: "List service-account clients (never their secrets)",
        requestParams: { header: adminKey },
        responses: { "200": json(clientList, "Clients"), ...errors },
      },
      post: {
        ...common,
        operationId: "createClient",
        summary: "Create a client for the client credentials grant; the secret is in this response only",
        requestParams: { header: adminKey },
        requestBody: { required: true, content: { "application/json": { schema: createClientBody } } },
        responses: {
          "201": json(createdClient, "Created"),
          ...errors,
          "400": json(errorBody, "Invalid request; details name the fields"),
        },
      },
    },
    "/admin/clients/{clientId}": {
      delete: {
        ...common,
        operationId: "revokeClient",
        summary: "Revoke a client and every access token it obtained",
        requestParams: { header: adminKey, path: z.object({ clientId: z.string() }) },
        responses: { "204": { description: "Revoked" }, "404": json(errorBody, "No such client"), ...errors },
      },
    },
  };
}
