/**
 * bench/status: `GET /status/:id` throughput of `kubecrew dev` (bearer auth, lookup, status shape) against a bare
 * express app answering the same JSON, measured in the same run, alternating rounds. Target ratio ≥ 0.8.
 *   npm run bench:status   [BENCH_SECONDS=5 BENCH_CONNECTIONS=20 BENCH_ROUNDS=3]
 */
import autocannon from "autocannon";
import express from "express";
import type { AddressInfo } from "node:net";
import { MemoryTokenStore } from "../api/auth/memory-token-store.ts";
import { silentLogger } from "../core/logger.ts";
import { devConfigSchema } from "../dev/config.ts";
import { startDev } from "../dev/start.ts";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const token = "kco_bench-status-token-000000000000";

const tokens = new MemoryTokenStore();
tokens.add(token, { kind: "org", crews: "*", subject: "bench" });
const dev = await startDev(devConfigSchema.parse({ PORT: "0" }), silentLogger(), { tokens });
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const { kickoff_id: id } = (await (
  await fetch(`${dev.url}/kickoff`, { method: "POST", headers, body: JSON.stringify({ inputs: { topic: "bench" } }) })
).json()) as { kickoff_id: string };
let body: { status: string } = { status: "running" };
while (body.status !== "completed") {
  await new Promise((r) => setTimeout(r, 200));
  body = (await (await fetch(`${dev.url}/status/${id}`, { headers })).json()) as { status: string };
}

const bare = express();
bare.get("/status/:id", (_req, res) => {
  res.json(body);
});
const bareServer = bare.listen(0, "127.0.0.1");
await new Promise((r) => bareServer.once("listening", r));
const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`;

async function load(url: string): Promise<number> {
  const result = await autocannon({ url: `${url}/status/${id}`, headers, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

await load(bareUrl); // warm-up both, untimed
await load(dev.url);
const kubecrew: number[] = [];
const baseline: number[] = [];
for (let round = 0; round < rounds; round++) {
  baseline.push(await load(bareUrl));
  kubecrew.push(await load(dev.url));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratio = median(kubecrew) / median(baseline);
console.log(`GET /status/:id, ${connections} connections, ${rounds} rounds of ${seconds}s (median req/s)`);
console.log(`  bare express, same JSON: ${median(baseline).toFixed(0)} req/s  (rounds: ${baseline.map((x) => x.toFixed(0)).join(", ")})`);
console.log(`  kubecrew dev:            ${median(kubecrew).toFixed(0)} req/s  (rounds: ${kubecrew.map((x) => x.toFixed(0)).join(", ")})`);
console.log(`  ratio: ${ratio.toFixed(2)} (target ≥ 0.80)`);
bareServer.close();
await dev.stop();
process.exit(0);
