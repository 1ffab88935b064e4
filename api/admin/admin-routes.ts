import express, { Router } from "express";
import type { Logger } from "../../core/logger.ts";
import type { AdminKeyGuesses } from "../auth/admin-key-guesses.ts";
import type { SessionAuth } from "../auth/session-auth.ts";
import type { ManagedTokenStore } from "../auth/token-store.ts";
import { ApiError } from "../errors.ts";
import { parseOr400 } from "../validation.ts";
import { requireAdminKey } from "./admin-key.ts";
import { clientRecordBody, createClientBody, createTokenBody, tokenRecordBody } from "./bodies.ts";
import { refuseDeepJson } from "../../platform/http/json-depth.ts";
import { refuseWrongMethods } from "../../platform/http/wrong-methods.ts";

export interface AdminRoutesDeps {
  store: ManagedTokenStore;
  /** Callers sending it in X-Admin-Key are admitted. */
  adminKey?: string;
  /** The web console's sessions: an org admin's session is admitted too. */
  sessions?: SessionAuth;
  /** Wrong X-Admin-Key values per source address. */
  adminKeyGuesses?: AdminKeyGuesses;
  log: Logger;
}

/**
 * The admin API: the `kubecrew token` and `kubecrew client` operations over HTTP, behind the X-Admin-Key header.
 * New tokens and client secrets are in the creating response only (marked no-store); afterwards only hashes exist.
 */
export function adminRoutes(deps: AdminRoutesDeps): Router {
  const { store, log } = deps;
  const router = Router();
  router.use(
    "/admin",
    requireAdminKey(deps.adminKey, deps.sessions, deps.adminKeyGuesses),
    express.json({ limit: "16kb", verify: refuseDeepJson }),
  );

  router.get("/admin/tokens", async (_req, res) => {
    res.json({ tokens: (await store.listTokens()).map(tokenRecordBody) });
  });

  router.post("/admin/tokens", async (req, res) => {
    const body = parseOr400(createTokenBody, req.body ?? {}, "token request");
    const { token, record } = await store.createToken({
      kind: body.kind,
      crews: body.crews,
      ...(body.user ? { user: body.user } : {}),
      ...(body.ttl_seconds ? { ttlSeconds: body.ttl_seconds } : {}),
    });
    log.info({ tokenId: record.id, kind: record.kind, crews: record.crews }, "Token created through the admin API");
    res
      .status(201)
      .set("Cache-Control", "no-store")
      .json({ token, ...tokenRecordBody(record) });
  });

  router.delete("/admin/tokens/:id", async (req, res) => {
    const id = String(req.params.id);
    if (!(await store.revokeToken(id))) throw new ApiError(404, "Not Found", `No token with id ${id}`);
    log.info({ tokenId: id }, "Token revoked through the admin API");
    res.status(204).end();
  });

  router.get("/admin/clients", async (_req, res) => {
    res.json({ clients: (await store.listClients()).map(clientRecordBody) });
  });

  router.post("/admin/clients", async (req, res) => {
    const body = parseOr400(createClientBody, req.body ?? {}, "client request");
    const { clientSecret, record } = await store.createClient({
      role: body.role,
      crews: body.crews,
      ...(body.name ? { name: body.name } : {}),
    });
    log.info(
      { clientId: record.clientId, role: record.role, crews: record.crews },
      "Client created through the admin API",
    );
    res
      .status(201)
      .set("Cache-Control", "no-store")
      .json({ ...clientRecordBody(record), client_secret: clientSecret });
  });

  router.delete("/admin/clients/:clientId", async (req, res) => {
    const clientId = String(req.params.clientId);
    if (!(await store.revokeClient(clientId))) throw new ApiError(404, "Not Found", `No client with id ${clientId}`);
    log.info({ clientId }, "Client and its access tokens revoked through the admin API");
    res.status(204).end();
  });

  refuseWrongMethods(router);
  return router;
}
