/**
 * bench/api-cluster's server process, alone in its process so its RSS and CPU time are its own. Started by
 * bench/api-cluster.ts with --expose-gc and IPC; it sends its URL, answers "rss" with its resident set size after a
 * full GC (and its JS heap) and "cpu" with the CPU time it used so far. With BENCH_API_PROF (a directory), it profiles
 * its CPU between "profile-start" and "profile-stop:<name>", writes <dir>/<name>.cpuprofile and answers its path: a
 * profile of one load, not of the whole run.
 *   - `kubecrew api` as deployed: startClusterApi with its config parsed from the environment (KUBECONFIG,
 *     POD_NAMESPACE, KUBECREW_REDIS_URL, HOST, PORT), informer caches, tokens in Redis;
 *   - with BENCH_BARE_BODY: a bare express app answering `GET /status/:id` with exactly those bytes.
 */
import express from "express";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
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
const profileDir = process.env.BENCH_API_PROF;
const profiler = profileDir ? new Session() : undefined;
profiler?.connect();
await profiler?.post("Profiler.enable");
process.on("message", async (message) => {
  if (profiler && message === "profile-start") {
    await profiler.post("Profiler.start");
    process.send!({ profiling: true });
    return;
  }
  if (profiler && typeof message === "string" && message.startsWith("profile-stop:")) {
    const { profile } = await profiler.post("Profiler.stop");
    const file = join(profileDir!, `${message.slice("profile-stop:".length)}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    process.send!({ profiled: file });
    return;
  }
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
