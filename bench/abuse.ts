/**
 * bench/abuse: the bad inputs of issue 12, ABUSE_EACH (1,000) of each, against one `kubecrew dev` process (a child,
 * so its RSS is its own): its RSS before and after, and the p99 of a normal `GET /status/{kickoff_id}` measured during
 * the abuse against the p99 measured alone, in the same run. Targets: RSS growth ≤ 20 MB, p99 ratio ≤ 2.
 *   npm run bench:abuse   [ABUSE_EACH=1000 ABUSE_CONNECTIONS=1 ABUSE_ROUNDS=4 ABUSE_WARMUP=200 ABUSE_BASELINE=2000
 *                          ABUSE_ONLY=<part of a bad input's name>]
 * Loopback only; the abuse is a fixed number of requests.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/support/ports.ts";

const each = Number(process.env["ABUSE_EACH"] ?? 1000);
// One abusive client sending back to back, as the issue's repros did. More connections saturate the one process
// (it is single-threaded): a normal request then queues behind each of them, whatever they cost.
const connections = Number(process.env["ABUSE_CONNECTIONS"] ?? 1);
const baselineCount = Number(process.env["ABUSE_BASELINE"] ?? 2000);
const warmup = Number(process.env["ABUSE_WARMUP"] ?? 200);
const token = "kco_bench-abuse-token-0000000000000";

interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}
const agent = new Agent({ keepAlive: true, maxSockets: connections + 1 });
let base = "";

function send(req: Req): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, ...(req.body ? { "content-length": String(Buffer.byteLength(req.body)) } : {}) };
    const r = request(`${base}${req.path}`, { method: req.method, headers, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    r.on("error", reject);
    r.end(req.body);
  });
}

const auth = { authorization: `Bearer ${token}` };
const json = { ...auth, "content-type": "application/json" };
const form = { "content-type": "application/x-www-form-urlencoded", authorization: "Basic Y2xpZW50OnNlY3JldA==" };
const levels = 5000;
const deep = `{"inputs":{"topic":"x"},"meta":{"a":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}}`;
const kickoffWith = (body: object): Req => ({
  method: "POST",
  path: "/kickoff",
  headers: json,
  body: JSON.stringify(body),
});

/** The issue's bad inputs that one `kubecrew dev` answers (repros 1, 2, 3, 5, 8, 10 and an unknown encoding). */
const allBadInputs: [string, Req][] = [
  ["1 deep JSON (5,000 levels)", { method: "POST", path: "/kickoff", headers: json, body: deep }],
  ["2 GET /status/%ff", { method: "GET", path: "/status/%ff", headers: auth }],
  ["2 GET /status/%", { method: "GET", path: "/status/%", headers: auth }],
  ["2 GET /crews/%/inputs", { method: "GET", path: "/crews/%/inputs", headers: auth }],
  [
    "3 kickoff labelled gzip",
    { method: "POST", path: "/kickoff", headers: { ...json, "content-encoding": "gzip" }, body: '{"inputs":{}}' },
  ],
  [
    "3 kickoff labelled br",
    { method: "POST", path: "/kickoff", headers: { ...json, "content-encoding": "br" }, body: '{"inputs":{}}' },
  ],
  [
    "3 token labelled gzip",
    {
      method: "POST",
      path: "/oauth/token",
      headers: { ...form, "content-encoding": "gzip" },
      body: "grant_type=client_credentials",
    },
  ],
  ["5 webhook file:", kickoffWith({ inputs: { topic: "x" }, taskWebhookUrl: "file:///etc/passwd" })],
  ["5 webhook javascript:", kickoffWith({ inputs: { topic: "x" }, stepWebhookUrl: "javascript:alert(1)" })],
  ["5 webhook metadata", kickoffWith({ inputs: { topic: "x" }, crewWebhookUrl: "http://169.254.169.254/latest/" })],
  ["8 TRACE /inputs", { method: "TRACE", path: "/inputs", headers: auth }],
  [
    "10 kickoff text/plain",
    { method: "POST", path: "/kickoff", headers: { ...auth, "content-type": "text/plain" }, body: "topic=x" },
  ],
  ["10 inputs.topic null", kickoffWith({ inputs: { topic: null } })],
  [
    "unknown Content-Encoding",
    { method: "POST", path: "/kickoff", headers: { ...json, "content-encoding": "compress" }, body: "{}" },
  ],
];

/** ABUSE_ONLY=<text> keeps the bad inputs whose name contains it (to see what one of them costs). */
const only = process.env["ABUSE_ONLY"];
const badInputs = only ? allBadInputs.filter(([name]) => name.includes(only)) : allBadInputs;

const crews = mkdtempSync(join(tmpdir(), "kubecrew-abuse-"));
writeFileSync(
  join(crews, "quick.yaml"),
  `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: quick }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: mock }
  agents: [{ name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes." }]
  tasks: [{ name: write, agent: writer, description: "Write about {topic}", expectedOutput: "A text" }]
`,
);
const port = await freePort();
base = `http://127.0.0.1:${port}`;
const inspectPort = await freePort();
// The inspector (loopback) lets the bench run a full garbage collection before each RSS reading (Chrome DevTools
// Protocol, HeapProfiler.collectGarbage): what is measured is memory kept, not garbage not yet collected.
const child = spawn(
  process.execPath,
  [`--inspect=127.0.0.1:${inspectPort}`, join(import.meta.dirname, "../cli/main.ts"), "dev"],
  {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      KUBECREW_CREWS_DIR: crews,
      KUBECREW_DEFAULT_CREW: "quick",
      KUBECREW_DEV_ORG_TOKEN: token,
      KUBECREW_OAUTH_RATE_LIMIT_PER_IP: "100000000",
      KUBECREW_OAUTH_RATE_LIMIT_PER_CLIENT: "100000000",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  },
);
// The child's own errors pass through; the inspector's attach/detach notices do not.
child.stderr.setEncoding("utf8").on("data", (text: string) => {
  for (const line of text.split("\n"))
    if (line && !/^(Debugger|For help)/.test(line)) process.stderr.write(`${line}\n`);
});
process.on("exit", () => child.kill("SIGKILL"));

const rssMb = () => {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A full garbage collection in the child, through its inspector. */
async function collectGarbage(): Promise<void> {
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  await new Promise<void>((resolve) => {
    socket.onmessage = () => resolve();
    socket.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
  });
  socket.close();
}
const keptRssMb = async () => {
  await collectGarbage();
  await sleep(500);
  return rssMb();
};

for (let i = 0; ; i++) {
  if (
    await send({ method: "GET", path: "/healthz" }).then(
      () => true,
      () => false,
    )
  )
    break;
  if (i > 300) throw new Error("kubecrew dev did not start");
  await sleep(100);
}
const started = JSON.parse((await send(kickoffWith({ inputs: { topic: "bench" } }))).body) as { kickoff_id: string };
const statusReq: Req = { method: "GET", path: `/status/${started.kickoff_id}`, headers: auth };
for (;;) {
  const s = JSON.parse((await send(statusReq)).body) as { status: string };
  if (s.status === "completed") break;
  await sleep(200);
}

async function statusLatencies(until: () => boolean, atLeast: number): Promise<number[]> {
  const latencies: number[] = [];
  while (latencies.length < atLeast || !until()) {
    const t = performance.now();
    const { status } = await send(statusReq);
    latencies.push(performance.now() - t);
    if (status !== 200) throw new Error(`a normal /status answered ${status}`);
  }
  return latencies;
}
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;

/** Every bad input `count` times over `connections` connections; the statuses answered, per input. */
async function abuse(count: number): Promise<Map<string, Map<number, number>>> {
  const queue = badInputs.flatMap((input) => Array.from({ length: count }, () => input));
  const answered = new Map<string, Map<number, number>>();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let next = queue.pop(); next; next = queue.pop()) {
        const [name, req] = next;
        const { status } = await send(req);
        const byStatus = answered.get(name) ?? new Map<number, number>();
        byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
        answered.set(name, byStatus);
      }
    }),
  );
  return answered;
}

// Warm-up: ABUSE_WARMUP of each bad input and 500 normal requests, so what is measured is the steady state (the
// allocator's high-water mark, JIT) rather than first use; the RSS it cost is printed too.
const rssStart = await keptRssMb();
await abuse(warmup);
await statusLatencies(() => true, 500);
const rssBefore = await keptRssMb();
// Alone and during the abuse in alternating rounds (ABUSE_ROUNDS), so both see the same machine (it is shared and its
// load changes by the minute); the p99s are of the pooled samples.
const rounds = Number(process.env["ABUSE_ROUNDS"] ?? 4);
const alone: number[] = [];
const during: number[] = [];
const answered = new Map<string, Map<number, number>>();
let abuseSeconds = 0;
for (let round = 0; round < rounds; round++) {
  alone.push(...(await statusLatencies(() => true, Math.ceil(baselineCount / rounds))));
  let abusing = true;
  const started = performance.now();
  const [counts, latencies] = await Promise.all([
    abuse(Math.ceil(each / rounds)).finally(() => (abusing = false)),
    statusLatencies(() => !abusing, 50),
  ]);
  abuseSeconds += (performance.now() - started) / 1000;
  during.push(...latencies);
  for (const [name, byStatus] of counts) {
    const total = answered.get(name) ?? new Map<number, number>();
    for (const [status, n] of byStatus) total.set(status, (total.get(status) ?? 0) + n);
    answered.set(name, total);
  }
}
const rssAfterRaw = rssMb();
const rssAfter = await keptRssMb();

console.log(
  `bench:abuse — ${each} of each of ${badInputs.length} bad inputs over ${connections} connection(s), ${rounds} rounds`,
);
for (const [name] of badInputs) {
  const statuses = [...(answered.get(name) ?? new Map<number, number>())].map(([s, n]) => `${s}×${n}`).join(" ");
  console.log(`  ${name.padEnd(28)} ${statuses}`);
}
const serverErrors = [...answered.values()].flatMap((m) => [...m]).filter(([s]) => s >= 500);
const growth = rssAfter - rssBefore;
const ratio = p99(during) / p99(alone);
console.log(
  `  ${[...answered.values()].flatMap((m) => [...m.values()]).reduce((x, y) => x + y, 0)} requests in ${abuseSeconds.toFixed(1)} s; 5xx answers: ${serverErrors.length ? serverErrors.map(([s, n]) => `${s}×${n}`).join(" ") : "none"}`,
);
console.log(
  `  RSS of kubecrew dev: ${rssStart.toFixed(1)} MB at start, ${rssBefore.toFixed(1)} MB after the warm-up ` +
    `(${warmup} of each), ${rssAfter.toFixed(1)} MB after the abuse: ` +
    `${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB (target ≤ 20 MB), each after a full GC ` +
    `(${rssAfterRaw.toFixed(1)} MB just before it)`,
);
console.log(
  `  GET /status p99: ${p99(alone).toFixed(2)} ms alone (${alone.length} requests), ${p99(during).toFixed(2)} ms ` +
    `during the abuse (${during.length} requests): ratio ${ratio.toFixed(2)} (target ≤ 2)`,
);
child.kill("SIGTERM");
await new Promise((r) => child.once("exit", r));
agent.destroy();
process.exit(growth <= 20 && ratio <= 2 && !serverErrors.length ? 0 : 1);
