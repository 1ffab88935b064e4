import { Router } from "express";
import type { Redis } from "ioredis";

async function redisReachable(redis: Redis): Promise<boolean> {
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 1_000).unref());
  return Promise.race([
    redis.ping().then(
      (reply) => reply === "PONG",
      () => false,
    ),
    timeout,
  ]);
}

/** `/health` is liveness (always 200 while the process serves) and reports Redis; `/ready` is 503 without Redis. */
export function healthRoutes(redis: Redis): Router {
  const router = Router();
  router.get("/health", async (_req, res) => {
    const reachable = await redisReachable(redis);
    res.json({ status: "ok", redis: reachable ? "reachable" : "unreachable" });
  });
  router.get("/ready", async (_req, res) => {
    const reachable = await redisReachable(redis);
    res
      .status(reachable ? 200 : 503)
      .json({ status: reachable ? "ready" : "not ready", redis: reachable ? "reachable" : "unreachable" });
  });
  return router;
}
