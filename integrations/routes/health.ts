import { Router } from "express";
import type { IntegrationsStore } from "../store.ts";

/**
 * `/health` is liveness (always 200 while the process serves) and reports the store (Redis); `/ready` is 503 while the
 * store does not answer. A store in memory always answers.
 */
export function healthRoutes(store: IntegrationsStore): Router {
  const router = Router();
  router.get("/health", async (_req, res) => {
    const reachable = await store.reachable();
    res.json({ status: "ok", redis: reachable ? "reachable" : "unreachable" });
  });
  router.get("/ready", async (_req, res) => {
    const reachable = await store.reachable();
    res
      .status(reachable ? 200 : 503)
      .json({ status: reachable ? "ready" : "not ready", redis: reachable ? "reachable" : "unreachable" });
  });
  return router;
}
