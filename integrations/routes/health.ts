import { Router } from "express";
import type { IntegrationsStore } from "../store.ts";

/**
 * `/health` is liveness (always 200 while the process serves) and reports the store — `redis` says whether Redis
 * answers; a store in memory (`kubecrew dev`) has no Redis to report and always answers —; `/ready` is 503 while the
 * store does not answer.
 */
export function healthRoutes(store: IntegrationsStore): Router {
  const router = Router();
  const report = (reachable: boolean) =>
    store.kind === "redis"
      ? { store: store.kind, redis: reachable ? "reachable" : "unreachable" }
      : { store: store.kind };
  router.get("/health", async (_req, res) => {
    res.json({ status: "ok", ...report(await store.reachable()) });
  });
  router.get("/ready", async (_req, res) => {
    const reachable = await store.reachable();
    res.status(reachable ? 200 : 503).json({ status: reachable ? "ready" : "not ready", ...report(reachable) });
  });
  return router;
}
