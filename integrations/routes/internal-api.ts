import { createHash, timingSafeEqual } from "node:crypto";
import { Router, type RequestHandler } from "express";
import type { z } from "zod";
import type { AccessTokens } from "../access-tokens.ts";
import type { IntegrationsConfig } from "../config.ts";
import { connectRequestSchema } from "../connect-sessions.ts";
import type { ConnectionStore } from "../connection-store.ts";
import { badRequest, notFound } from "../errors.ts";
import type { SignIn } from "../sign-in.ts";

/** Constant-time check of `Authorization: Bearer <KUBECREW_OAUTH_INTERNAL_API_KEY>` (digests, so lengths never leak). */
export function requireInternalApiKey(apiKey: string): RequestHandler {
  const expected = createHash("sha256").update(apiKey).digest();
  return (req, res, next) => {
    const header = req.headers.authorization ?? "";
    const given = header.toLowerCase().startsWith("bearer ") ? header.slice(7).trim() : "";
    const digest = createHash("sha256").update(given).digest();
    if (given && timingSafeEqual(digest, expected)) return next();
    res.set("WWW-Authenticate", 'Bearer realm="kubecrew-integrations"');
    res.status(401).json({ error: "Unauthorized", message: "Invalid or missing internal API key" });
  };
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  return parsed.data;
}

/** Calls from the rest of kubecrew: start a connection, list them, hand out fresh access tokens, delete. */
export function internalApiRoutes(
  config: IntegrationsConfig,
  signIn: SignIn,
  connections: ConnectionStore,
  accessTokens: AccessTokens,
  now: () => Date,
): Router {
  const router = Router();
  router.use("/v1/internal", requireInternalApiKey(config.internalApiKey));
  router.use("/v1/internal", (_req, res, next) => {
    res.set("Cache-Control", "no-store");
    next();
  });

  router.get("/v1/internal/providers", (_req, res) => {
    res.json({
      providers: [...config.providers.values()]
        .filter((provider) => provider.products.size > 0)
        .map((provider) => ({
          id: provider.id,
          name: provider.displayName,
          products: [...provider.products.values()].map((product) => ({
            id: product.product,
            name: product.displayName,
            scopes: product.scopes,
          })),
        })),
    });
  });

  router.post("/v1/internal/connect-sessions", async (req, res) => {
    const session = await signIn.createConnectSession(parse(connectRequestSchema, req.body));
    res.status(201).json(session);
  });

  router.get("/v1/internal/users/:userId/connections", async (req, res) => {
    res.json({ connections: await connections.listForUser(req.params.userId) });
  });

  router.get("/v1/internal/connections/:id", async (req, res) => {
    const connection = await connections.get(req.params.id);
    if (!connection) throw notFound("Connection not found", `No connection found with ID: ${req.params.id}`);
    res.json(connection);
  });

  router.post("/v1/internal/connections/:id/access-token", async (req, res) => {
    const token = await accessTokens.fresh(req.params.id);
    const expiresIn = token.expiresAt
      ? Math.max(0, Math.floor((token.expiresAt.getTime() - now().getTime()) / 1000))
      : null;
    res.json({
      access_token: token.accessToken,
      token_type: token.tokenType,
      expires_at: token.expiresAt?.toISOString() ?? null,
      expires_in: expiresIn,
      scope: token.scopes.join(" "),
    });
  });

  router.delete("/v1/internal/connections/:id", async (req, res) => {
    const { revoked } = await accessTokens.remove(req.params.id);
    res.json({ deleted: true, revoked });
  });

  return router;
}
