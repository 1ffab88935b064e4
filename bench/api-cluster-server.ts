/**
 * bench/api-cluster's server process, alone in its process so its RSS and CPU time are its own. Started by
 * bench/api-cluster.ts with --expose-gc and IPC; it sends its URL, answers "rss" with its resident set size after a
 * full GC (and its JS heap) and "cpu" with the CPU time it used so far.
 *   - `kubecrew api` as deployed: startClusterApi with its config parsed from the environment (KUBECONFIG,
 *     POD_NAMESPACE, REDIS_URL, HOST, PORT), informer caches, tokens in Redis;
 *   - with BENCH_BARE_BODY: a bare express app answering `GET /status/:id` with exactly those bytes.
 */
import express from "express";
import { apiConfigSchema } from "../api/config.ts";
import { startClusterApi } from "../api/start-cluster-api.ts";
import { parseConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { listen } from "./load.ts";

async function startBare(body: string): Promise<{ url: string; stop(): Promise<void> }> {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.get("/status/:id", (_req, res) => {
    res.type("application/json").send(body);
  });
  const server = await listen(app);
  return { url: server.url, stop: async () => server.close() };
}

async function startCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  const config = parseConfig(apiConfigSchema, process.env);
  // As `kubecrew api` loads it (KUBECONFIG), not through @kubernetes/client-node's KubeConfig.
  return startClusterApi(config, createLogger({ level: config.logLevel, name: "api" }));
}

const bare = process.env.BENCH_BARE_BODY;
const server = bare === undefined ? await startCluster() : await startBare(bare);

const gc = (globalThis as { gc?: () => void }).gc!;
process.on("message", async (message) => {
  if (message === "cpu") {
    const { user, system } = process.cpuUsage();
    process.send!({ cpuMs: (user + system) / 1000 });
    return;
  }
  if (message !== "rss") return;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
  process.send!({ rss, heapTotal, heapUsed, external });
});
process.on("disconnect", () => {
  void server.stop().then(() => process.exit(0));
});
process.send!({ url: server.url });
