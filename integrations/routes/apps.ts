import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { Router, type Request } from "express";
import { z } from "zod";
import { AppCredentialError, verifyAppCredential, type AppCredentialClaims } from "../../core/app-credential.ts";
import type { AppCredentialRevocations } from "../apps/app-credential-revocations.ts";
import type { AppToolCalls } from "../apps/app-tool-calls.ts";
import { appsMcpServer } from "../apps/apps-mcp-server.ts";
import type { IntegrationsConfig } from "../config.ts";
import { badRequest, IntegrationError } from "../errors.ts";
import { requireInternalApiKey } from "./internal-api.ts";

/** What the controller sends when an execution finishes: its credential is refused from now until it expires. */
export const revokeAppCredentialSchema = z
  .object({
    executionUid: z.string().min(1).max(256),
    expiresAt: z.iso.datetime({ offset: true }),
  })
  .meta({ id: "AppCredentialRevocation" });

const unauthorized = (message: string) =>
  new IntegrationError(401, "Unauthorized", message, {
    "WWW-Authenticate": 'Bearer realm="kubecrew-apps", error="invalid_token"',
  });

/**
 * `POST /v1/mcp`: the connected apps of one execution's user as a stateless streamable-HTTP MCP server, for whoever
 * holds its app credential; `POST /v1/internal/app-credentials/revoke`: the controller ends a credential early.
 */
export function appsRoutes(
  config: IntegrationsConfig,
  revocations: AppCredentialRevocations,
  calls: AppToolCalls,
  now: () => Date,
): Router {
  const router = Router();

  async function credential(req: Request): Promise<AppCredentialClaims> {
    const key = config.apps.signingKey;
    if (!key) {
      // Like an unconfigured provider: this deployment does not offer the feature.
      throw new IntegrationError(
        404,
        "Apps not configured",
        "This integrations service has no KUBECREW_APPS_SIGNING_KEY, so it cannot check app credentials",
      );
    }
    const header = req.headers.authorization ?? "";
    const token = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : "";
    if (!token) throw unauthorized("Missing app credential: send Authorization: Bearer <app credential>");
    let claims: AppCredentialClaims;
    try {
      claims = await verifyAppCredential(key, token, now());
    } catch (error) {
      if (error instanceof AppCredentialError) throw unauthorized(error.message);
      throw error;
    }
    if (await revocations.isRevoked(claims.executionUid))
      throw unauthorized("The app credential was revoked: its execution has finished");
    return claims;
  }

  router.post("/v1/mcp", async (req, res) => {
    const claims = await credential(req);
    res.set("Cache-Control", "no-store");
    const server = appsMcpServer(claims, calls);
    // Stateless: each request is a whole exchange, so any replica answers any request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  router.post("/v1/internal/app-credentials/revoke", requireInternalApiKey(config.internalApiKey), async (req, res) => {
    res.set("Cache-Control", "no-store");
    const parsed = revokeAppCredentialSchema.safeParse(req.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw badRequest(`${issue.path.join(".") || "body"}: ${issue.message}`);
    }
    await revocations.revoke(parsed.data.executionUid, new Date(parsed.data.expiresAt));
    res.json({ revoked: true });
  });

  return router;
}
