/**
 * bench/api-cluster: the crew API in cluster mode (`kubecrew api` as deployed: informer caches, tokens in a real
 * redis-server), alone in its own process and compiled to JavaScript as the image runs it (bench/as-image.ts), on a
 * private local control plane (as the controller benches use), against
 * baselines measured in the same run, every load once per round:
 *   - kickoff: `POST /crews/{crew}/kickoff` per second against CrewExecutions created straight through the apiserver
 *     (the same object the API creates) at the same concurrency (target ratio ≥ 0.8);
 *   - status: `GET /crews/{crew}/status/{id}` of a completed execution, answered from the informer cache, against a bare
 *     express app (its own process too) answering the same JSON bytes (target ratio ≥ 0.9, issue 29); CPU per request
 *     of both;
 *   - the API process's RSS after a full GC with BENCH_EXECUTIONS completed executions (each with its task's result)
 *     in its caches (target ≤ 200 MB).
 * No controller runs: executions are completed by the bench (status patch and result, as the controller and the
 * runner write them), so the figures are the API and the apiserver alone. Loopback only; bounded: BENCH_SECONDS per
 * status load and round, BENCH_KICKOFFS creates per kickoff load and round, BENCH_EXECUTIONS executions in all;
 * every wait has a deadline.
 *   npm run bench:api-cluster   [BENCH_SECONDS=5 BENCH_CONNECTIONS=20 BENCH_ROUNDS=3 BENCH_KICKOFFS=1500
 *                                BENCH_EXECUTIONS=10000 BENCH_KUBECONFIG=… BENCH_API_PROF=<dir for CPU profiles>
 *                                BENCH_ONLY=status (the status loads alone; last line `status_ratio <r>`)]
 * BENCH_API_PROF: the API process's CPU profile of each of its loads in that directory (status-<round>, kickoff-<round>;
 * raw-<round>: the API while the bench creates directly, its informers) and the bare app's (bare-status-<round>), for
 * `node bench/profile-summary.ts`.
 * The profiler costs the API CPU: quote the figures of a run without it.
 */
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { RedisTokenStore } from "../api/auth/redis-token-store.ts";
import { silentLogger } from "../core/logger.ts";
import { connectRedis, redisReady } from "../platform/redis-client.ts";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  LABEL_CREW,
  LABEL_EXECUTION,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  resourcePath,
} from "../kube/resources.ts";
import { startRedis } from "../test/support/redis.ts";
import { benchCluster, benchNamespace, deleteNamespace } from "./controller-support.ts";
import { benchSettings, measure, median, type Load, type Measurement } from "./load.ts";
import { compileAsImage, imageEnv } from "./as-image.ts";

const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 10_000);
/** BENCH_ONLY=status: the status loads alone (a quicker run when only the poll path changed). */
const STATUS_ONLY = process.env.BENCH_ONLY === "status";
const { seconds: SECONDS, connections: CONNECTIONS, rounds: ROUNDS } = benchSettings;
const CREW = "bench";
// The server process runs compiled to JavaScript, as `kubecrew api` runs in the image (bench/as-image.ts).
const serverScript = compileAsImage([join(import.meta.dirname, "api-cluster-server.ts")])(
  join(import.meta.dirname, "api-cluster-server.ts"),
);
const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

async function within<T>(
  what: string,
  ms: number,
  check: () => T | undefined | false | Promise<T | undefined | false>,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`bench:api-cluster: ${what} not within ${ms} ms`);
    await sleep(50);
  }
}

console.log(
  `bench:api-cluster: ${CONNECTIONS} in flight, ${ROUNDS} rounds of ${SECONDS}s per load, ${EXECUTIONS} executions; ` +
    `load average at start ${load()}`,
);
const cluster = benchCluster();
const client = new KubeClient(cluster.kubeConfig);
const namespace = await benchNamespace(cluster, { [CREW]: { model: "mock", tasks: 1 } });
const crew = await client.get<KubeObject>(resourcePath(CREWS, namespace, CREW));

const redisServer = await startRedis();
const redis = connectRedis(redisServer.url, { log: silentLogger() });
await redisReady(redis);
const { token, record } = await new RedisTokenStore(redis).createToken({ kind: "org", crews: "*" });
redis.disconnect();
// A poller's GET carries only the token; a kickoff's body is JSON.
const headers = { authorization: `Bearer ${token}` };
const jsonHeaders = { ...headers, "content-type": "application/json" };

/** The object `POST /kickoff` creates (api/kubernetes-backend.ts), so the baseline writes the same bytes. */
const executionObject = (name: string) => ({
  apiVersion: CREW_EXECUTIONS.apiVersion,
  kind: CREW_EXECUTIONS.kind,
  metadata: { name, namespace, labels: { [LABEL_CREW]: CREW, [LABEL_MANAGED_BY]: MANAGED_BY } },
  spec: {
    crewRef: { name: CREW },
    inputs: { topic: "bench" },
    requestedBy: { kind: "org", subject: record.subject },
    stop: false,
  },
});

/** What the controller and the runner write for a finished one-task run: its result, then the final status. */
async function complete(name: string): Promise<void> {
  const started = new Date(Date.now() - 2000).toISOString();
  const finished = new Date().toISOString();
  await client.create(resourcePath(CREW_TASK_RESULTS, namespace), {
    apiVersion: CREW_TASK_RESULTS.apiVersion,
    kind: CREW_TASK_RESULTS.kind,
    metadata: { name: `${name}-0`, namespace, labels: { [LABEL_EXECUTION]: name } },
    spec: {
      executionRef: { name },
      taskName: "step1",
      taskIndex: 0,
      agent: "bench Writer",
      attempt: 1,
      output: `Step 1 on bench: ${"tides rise and fall twice a day. ".repeat(8)}`,
      executionTime: 1.9,
      model: "mock",
      tokenUsage: { promptTokens: 120, completionTokens: 80, totalTokens: 200 },
      stepCount: 1,
    },
  });
  const succeeded = { type: "Succeeded", status: "True", reason: "Completed", lastTransitionTime: finished };
  await client.mergePatch(`${resourcePath(CREW_EXECUTIONS, namespace, name)}/status`, {
    status: {
      phase: "Succeeded",
      progress: { completedTasks: 1, totalTasks: 1 },
      progressText: "1/1",
      tasks: [
        { name: "step1", agent: "bench Writer", phase: "Succeeded", startTime: started, completionTime: finished },
      ],
      startTime: started,
      completionTime: finished,
      executionTime: 2,
      conditions: [{ ...succeeded, message: "All 1 tasks succeeded", observedGeneration: 1 }],
      observedGeneration: 1,
      crewSpec: crew.spec,
    },
  });
}

/** Runs work(0), work(1), … `inFlight` at a time until `stop(started)` says so. */
async function pool(inFlight: number, stop: (started: number) => boolean, work: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (!stop(next)) await work(next++);
    }),
  );
}

interface Memory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
}
const mb = (m: Memory) =>
  `${(m.rss / MB).toFixed(0)} MB RSS (JS heap ${(m.heapUsed / MB).toFixed(0)} MB used of ${(m.heapTotal / MB).toFixed(0)}, ` +
  `external ${(m.external / MB).toFixed(0)} MB)`;

interface ServerProcess {
  url: string;
  cpuMs(): Promise<number>;
  memory(): Promise<Memory>;
  /** `work` under the process's CPU profiler when BENCH_API_PROF is set: <dir>/<name>.cpuprofile. */
  profiled<T>(name: string, work: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

/** The API (or, with a body, the bare app) in a process of its own. */
async function startServer(bareBody?: string): Promise<ServerProcess> {
  const profileDir = process.env.BENCH_API_PROF ? resolve(process.env.BENCH_API_PROF) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const child = fork(serverScript, [], {
    execArgv: ["--expose-gc"],
    env: {
      ...process.env,
      ...imageEnv(),
      KUBECONFIG: cluster.kubeconfig,
      POD_NAMESPACE: namespace,
      KUBECREW_REDIS_URL: redisServer.url,
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "warn",
      ...(bareBody !== undefined ? { BENCH_BARE_BODY: bareBody } : {}),
      ...(profileDir ? { BENCH_API_PROF: profileDir } : { BENCH_API_PROF: "" }),
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  type Reply = { url?: string; cpuMs?: number; profiling?: boolean; profiled?: string } & Partial<Memory>;
  const replies: Reply[] = [];
  child.on("message", (m) => replies.push(m as Reply));
  const ask = async <K extends keyof Reply>(message: string, field: K) => {
    const before = replies.length;
    child.send(message);
    return (await within(message, 30_000, () => replies.slice(before).find((r) => r[field] !== undefined)))!;
  };
  const url = (await within("server start", 60_000, () => replies.find((r) => r.url)))!.url!;
  return {
    url,
    cpuMs: async () => (await ask("cpu", "cpuMs")).cpuMs!,
    memory: async () => ask("rss", "rss") as Promise<Memory>,
    profiled: async (name, work) => {
      if (!profileDir) return work();
      await ask("profile-start", "profiling");
      const result = await work();
      await ask(`profile-stop:${name}`, "profiled");
      return result;
    },
    stop: async () => {
      child.disconnect();
      await new Promise((r) => child.once("exit", r));
    },
  };
}

const api = await startServer();
await within("the API ready (Redis connected)", 30_000, async () => (await fetch(`${api.url}/readyz`)).ok);
const memoryAtStart = await api.memory();

const row = (name: string, ms: Measurement[], base: Measurement[]) => {
  const rpsRatio = median(ms.map((m, i) => m.rps / base[i]!.rps));
  const cpuRatio = median(ms.map((m, i) => m.cpuUs / base[i]!.cpuUs));
  return (
    `  ${name.padEnd(28)} ${median(ms.map((m) => m.rps))
      .toFixed(0)
      .padStart(7)} req/s ` +
    `(×${rpsRatio.toFixed(2)}; by round ${ms.map((m) => m.rps.toFixed(0)).join(", ")}), p99 ` +
    `${median(ms.map((m) => m.p99))} ms, CPU ${median(ms.map((m) => m.cpuUs)).toFixed(0)} µs/req (×${cpuRatio.toFixed(2)})`
  );
};

// ---- GET /status of a completed execution, against the bare app answering the same bytes.
const done = randomUUID();
await client.create(resourcePath(CREW_EXECUTIONS, namespace), executionObject(done));
await complete(done);
const statusUrl = `${api.url}/crews/${CREW}/status/${done}`;
const statusBody = await within("the completed status in the API's cache", 30_000, async () => {
  const text = await (await fetch(statusUrl, { headers })).text();
  return text.includes('"status":"completed"') && text.includes("tides rise") ? text : undefined;
});
const bare = await startServer(statusBody);
const bareText = await (await fetch(`${bare.url}/status/${done}`)).text();
if (bareText !== statusBody) throw new Error("bench:api-cluster: the bare app does not answer the same bytes");

const statusLoads: Load[] = [
  { name: "bare express, same JSON", options: { url: `${bare.url}/status/${done}`, headers }, cpuMs: bare.cpuMs },
  { name: "kubecrew api, completed", options: { url: statusUrl, headers }, cpuMs: api.cpuMs },
];
for (const l of statusLoads) await measure(l, 1);
const status = new Map<string, Measurement[]>(statusLoads.map((l) => [l.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const l of statusLoads) {
    const [server, name] = l.cpuMs === api.cpuMs ? [api, "status"] : [bare, "bare-status"];
    status.get(l.name)!.push(await server.profiled(`${name}-${round + 1}`, () => measure(l)));
  }
}
await bare.stop();
const [bareName, apiName] = statusLoads.map((l) => l.name) as [string, string];
const statusRatio = median(status.get(apiName)!.map((m, i) => m.rps / status.get(bareName)![i]!.rps));
console.log(`GET /crews/{crew}/status/{id} (completed), ${CONNECTIONS} connections; medians over ${ROUNDS} rounds`);
console.log(row(bareName, status.get(bareName)!, status.get(bareName)!));
console.log(row(apiName, status.get(apiName)!, status.get(bareName)!));
console.log(`  ratio (req/s against the bare app): ${statusRatio.toFixed(2)} (target ≥ 0.90)`);

async function finish(): Promise<never> {
  await api.stop();
  client.close();
  await redisServer.stop();
  await deleteNamespace(cluster.kubeconfig, namespace);
  cluster.stop();
  process.exit(0);
}
if (STATUS_ONLY) {
  console.log(`load average at end ${load()}`);
  console.log(`status_ratio ${statusRatio.toFixed(2)}`);
  await finish();
}

// ---- POST /kickoff, against the same CrewExecution created straight through the apiserver. Both bounded by count,
// so the executions they leave stay under BENCH_EXECUTIONS.
const KICKOFFS = Number(process.env.BENCH_KICKOFFS ?? 1500);
const WARM = 200;
const kickoffLoad = (amount: number): Load => ({
  name: "kubecrew api, POST /kickoff",
  options: {
    url: `${api.url}/crews/${CREW}/kickoff`,
    method: "POST",
    headers: jsonHeaders,
    body: '{"inputs":{"topic":"bench"}}',
    amount,
  },
  cpuMs: api.cpuMs,
});
/** Creates per second, and the API process's CPU per create meanwhile (its informers seeing the new objects). */
async function rawCreates(count: number): Promise<{ rate: number; apiCpuUs: number }> {
  const cpu0 = await api.cpuMs();
  const t0 = performance.now();
  await pool(
    CONNECTIONS,
    (n) => n >= count,
    async (i) => {
      if (i < count) await client.create(resourcePath(CREW_EXECUTIONS, namespace), executionObject(randomUUID()));
    },
  );
  const rate = count / ((performance.now() - t0) / 1000);
  return { rate, apiCpuUs: ((await api.cpuMs()) - cpu0) * (1000 / count) };
}
await rawCreates(WARM);
await measure(kickoffLoad(WARM));
const raw: number[] = [];
const rawApiCpu: number[] = [];
const kickoffs: Measurement[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const creates = await api.profiled(`raw-${round + 1}`, () => rawCreates(KICKOFFS));
  raw.push(creates.rate);
  rawApiCpu.push(creates.apiCpuUs);
  kickoffs.push(await api.profiled(`kickoff-${round + 1}`, () => measure(kickoffLoad(KICKOFFS))));
}

const kickoffRatio = median(kickoffs.map((m, i) => m.rps / raw[i]!));
console.log(`POST /crews/{crew}/kickoff, ${CONNECTIONS} in flight`);
console.log(
  `  raw CrewExecution creates       ${median(raw).toFixed(0).padStart(7)} /s (by round ${raw.map((r) => r.toFixed(0)).join(", ")}), ` +
    `API CPU meanwhile ${median(rawApiCpu).toFixed(0)} µs per create (its informers)`,
);
console.log(
  `  kubecrew api kickoffs           ${median(kickoffs.map((m) => m.rps))
    .toFixed(0)
    .padStart(7)} /s (by round ${kickoffs.map((m) => m.rps.toFixed(0)).join(", ")}), p99 ` +
    `${median(kickoffs.map((m) => m.p99))} ms, API CPU ${median(kickoffs.map((m) => m.cpuUs)).toFixed(0)} µs per kickoff`,
);
console.log(`  ratio (kickoffs / raw creates): ${kickoffRatio.toFixed(2)} (target ≥ 0.80)`);

// ---- RSS with EXECUTIONS completed executions (and their results) in the API's caches.
const memoryAfterLoads = await api.memory();
const existing = (await client.list<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace))).items.map(
  (o) => o.metadata!.name!,
);
const more = Math.max(0, EXECUTIONS - existing.length);
const names = [...existing.filter((n) => n !== done), ...Array.from({ length: more }, () => randomUUID())];
const fill0 = performance.now();
const FILL_IN_FLIGHT = 50;
await pool(
  FILL_IN_FLIGHT,
  (n) => n >= more,
  async (i) => {
    await client.create(resourcePath(CREW_EXECUTIONS, namespace), executionObject(names[existing.length - 1 + i]!));
  },
);
const toComplete = names.slice(0, -1);
await pool(
  FILL_IN_FLIGHT,
  (n) => n >= toComplete.length,
  async (i) => {
    if (i < toComplete.length) await complete(toComplete[i]!);
  },
);
// The last one after all the others: once the API answers it completed, its caches hold every earlier write.
await complete(names.at(-1)!);
await within("the last execution completed in the API's cache", 120_000, async () => {
  const text = await (await fetch(`${api.url}/crews/${CREW}/status/${names.at(-1)}`, { headers })).text();
  return text.includes('"status":"completed"') && text.includes("tides rise");
});
const fillSeconds = (performance.now() - fill0) / 1000;
const memory = await api.memory();
const total = (await client.list<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace))).items.length;

const rssMb = memory.rss / MB;
console.log(
  `API process after a full GC: at start ${mb(memoryAtStart)}; after the loads (${existing.length} executions, ` +
    `most never started) ${mb(memoryAfterLoads)}; with ${total} completed executions and their results ` +
    `${mb(memory)} (target ≤ 200 MB RSS); filled in ${fillSeconds.toFixed(0)} s`,
);
console.log(`load average at end ${load()}`);
console.log(
  `kickoff_ratio ${kickoffRatio.toFixed(2)}; status_ratio ${statusRatio.toFixed(2)}; rss_mb ${rssMb.toFixed(0)}`,
);

await finish();
