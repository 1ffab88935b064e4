/**
 * bench/status: `GET /status/:id` of `kubecrew dev` (bearer auth, lookup, the status shape) against a bare express
 * app answering the same JSON, in the same run, every load once per round (see bench/load.ts). Target ≥ 0.8.
 *   npm run bench:status   [BENCH_SECONDS=5 BENCH_CONNECTIONS=20 BENCH_ROUNDS=3]
 */
import express from "express";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryTokenStore } from "../api/auth/memory-token-store.ts";
import { silentLogger } from "../core/logger.ts";
import { devConfigSchema } from "../dev/config.ts";
import { startDev } from "../dev/start.ts";
import { listen, measureRounds, type Load } from "./load.ts";

const token = "kco_bench-status-token-000000000000";
const tokens = new MemoryTokenStore();
tokens.add(token, { kind: "org", crews: "*", subject: "bench" });
// Two one-task crews: one finishes at once, one sleeps through the whole benchmark (its status stays `running`).
const crewsDir = mkdtempSync(join(tmpdir(), "kubecrew-bench-"));
for (const [name, model] of [
  ["quick", "mock"],
  ["slow", "sleep-3600000"],
]) {
  writeFileSync(
    join(crewsDir, `${name}.yaml`),
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  llm: { provider: mock, model: "${model}" }
  agents: [{ name: writer, role: "{topic} Writer", goal: "Write about {topic}" }]
  tasks: [{ name: write, agent: writer, description: "Write about {topic}", expectedOutput: "A text" }]
  runner: { taskTimeoutSeconds: 3600 }
`,
  );
}
const dev = await startDev(devConfigSchema.parse({ PORT: "0", KUBECREW_CREWS_DIR: crewsDir }), silentLogger(), {
  tokens,
});
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

async function statusOf(id: string) {
  return (await (await fetch(`${dev.url}/crews/quick/status/${id}`, { headers })).json()) as { status: string };
}
async function kickoff(crew: string): Promise<string> {
  const body = JSON.stringify({ inputs: { topic: "bench" } });
  const response = await fetch(`${dev.url}/crews/${crew}/kickoff`, { method: "POST", headers, body });
  return ((await response.json()) as { kickoff_id: string }).kickoff_id;
}

const done = await kickoff("quick");
while ((await statusOf(done)).status !== "completed") await new Promise((r) => setTimeout(r, 200));
const bare = express();
bare.get("/status/:id", (_req, res) => {
  res.json(completedBody);
});
const completedBody = await statusOf(done);
const bareServer = await listen(bare);

const loads: Load[] = [
  { name: "bare express, same JSON", options: { url: `${bareServer.url}/status/${done}`, headers } },
  { name: "kubecrew dev, completed", options: { url: `${dev.url}/crews/quick/status/${done}`, headers } },
  { name: "kubecrew dev, running", options: { url: `${dev.url}/crews/slow/status/${await kickoff("slow")}`, headers } },
];
const rounds = await measureRounds(loads);
console.log(`GET /status/:id`);
console.log(rounds.table());
console.log(
  `  ratio (req/s against the bare app): completed ${rounds.rpsRatio(loads[1]!.name).toFixed(2)}, ` +
    `running ${rounds.rpsRatio(loads[2]!.name).toFixed(2)} (target ≥ 0.80)`,
);
bareServer.close();
await dev.stop();
process.exit(0);
