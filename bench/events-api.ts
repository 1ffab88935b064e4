/**
 * bench/events' API process: the crew API in cluster mode (the Kubernetes backend over informer caches) with an
 * in-memory token, alone in its process so its RSS is the API's. Started by bench/events.ts with --expose-gc and IPC:
 * it prints its URL, answers "rss" with its resident set size after a full GC and "cpu" with the CPU time it used.
 *   KUBECONFIG=… KUBECREW_NAMESPACE=… BENCH_TOKEN=… node --expose-gc bench/events-api.ts
 */
import { KubeConfig } from "@kubernetes/client-node";
import { MemoryTokenStore } from "../api/auth/memory-token-store.ts";
import { createKubernetesBackend } from "../api/kubernetes-backend.ts";
import { startApi } from "../api/server.ts";
import { silentLogger } from "../core/logger.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";

const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(process.env.KUBECONFIG!);
const log = silentLogger();
const backend = await createKubernetesBackend({ kubeConfig, namespace: process.env.KUBECREW_NAMESPACE!, log });
const tokens = new MemoryTokenStore();
tokens.add(process.env.BENCH_TOKEN!, { kind: "org", crews: "*", subject: "bench" });
const server = await startApi({
  backend,
  tokens,
  log,
  host: "127.0.0.1",
  port: 0,
  bodyLimitBytes: 1024 * 1024,
  outboundPolicy: clusterPolicy,
});

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
  process.send!({ rss: process.memoryUsage().rss });
});
process.on("disconnect", () => {
  void server.stop().then(() => backend.stop().then(() => process.exit(0)));
});
process.send!({ url: server.url });
