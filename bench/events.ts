/**
 * bench/events: 1,000 clients of `GET /status/{id}/events` on one crew API process in cluster mode (a private local
 * control plane, as bench/controller-throughput uses), against the same number of idle keep-alive connections to the
 * same process, measured in the same run:
 *   - RSS growth per client after a full GC (target ≤ 50 KB), next to the idle connections' growth per connection;
 *   - from a CrewTaskResult patch (one more step) to the step event reaching each client: p50/p99 (target p99
 *     ≤ 100 ms), next to the same patch reaching an informer of the bench's own (the apiserver's watch delay).
 * Loopback only; bounded: BENCH_CLIENTS (1000), BENCH_PATCHES (20), every wait has a deadline.
 *   npm run bench:events   [BENCH_CLIENTS=1000 BENCH_PATCHES=20 BENCH_KUBECONFIG=… BENCH_API_PROF=<dir for a CPU profile>]
 */
import { fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import { loadavg } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../core/logger.ts";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, LABEL_EXECUTION, resourcePath } from "../kube/resources.ts";
import { applyCrew, crewYaml } from "../test/e2e/support/fixture.ts";
import { benchCluster, benchNamespace, deleteNamespace, ms, percentile } from "./controller-support.ts";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const PATCHES = Number(process.env.BENCH_PATCHES ?? 20);
const TOKEN = "kco_bench-events-token-0000000000000";
const KB = 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function within<T>(what: string, ms: number, check: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`bench:events: ${what} not within ${ms} ms`);
    await sleep(20);
  }
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");
console.log(`bench:events: ${CLIENTS} clients, ${PATCHES} patches; load average at start ${load()}`);
const cluster = benchCluster();
const client = new KubeClient(cluster.kubeConfig);
const namespace = await benchNamespace(cluster, {});
await applyCrew(cluster.kubeconfig, namespace, crewYaml("stream", "mock", { tasks: 1 }));

// One running execution whose task's in-progress result gets one more step per patch (as a runner's reporter does).
const id = randomUUID();
await client.create(resourcePath(CREW_EXECUTIONS, namespace), {
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "CrewExecution",
  metadata: { name: id, namespace },
  spec: { crewRef: { name: "stream" }, inputs: { topic: "bench" } },
});
await client.mergePatch(`${resourcePath(CREW_EXECUTIONS, namespace, id)}/status`, {
  status: { phase: "Running", tasks: [{ name: "step1", phase: "Running", startTime: new Date().toISOString() }] },
});
const step = (index: number) => ({
  index,
  kind: "tool",
  tool: "lookup",
  input: '{"q":"tides"}',
  output: `result ${index}`,
  startedAt: new Date().toISOString(),
  durationMs: 1,
});
const steps = [step(0)];
const resultName = `${id}-0-steps`;
await client.create(resourcePath(CREW_TASK_RESULTS, namespace), {
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "CrewTaskResult",
  metadata: { name: resultName, namespace, labels: { [LABEL_EXECUTION]: id } },
  spec: {
    executionRef: { name: id },
    taskName: "step1",
    taskIndex: 0,
    agent: "Writer",
    attempt: 1,
    executionTime: 0,
    steps,
    stepCount: 1,
    toolsUsed: ["lookup"],
  },
});

/** One API process; each measurement gets a fresh one, so memory one freed is not reused by the next. */
async function startApiProcess() {
  const child = fork(join(import.meta.dirname, "events-api.ts"), [], {
    execArgv: [
      "--expose-gc",
      ...(process.env.BENCH_API_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_API_PROF}`] : []),
    ],
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, KUBECREW_NAMESPACE: namespace, BENCH_TOKEN: TOKEN },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const replies: { url?: string; rss?: number; cpuMs?: number }[] = [];
  child.on("message", (m) => replies.push(m as { url?: string; rss?: number; cpuMs?: number }));
  const url = new URL((await within("API start", 30_000, () => replies.find((r) => r.url)))!.url!);
  const rss = async (): Promise<number> => {
    const before = replies.length;
    child.send("rss");
    return (await within("RSS", 10_000, () => replies.slice(before).find((r) => r.rss)))!.rss!;
  };
  return {
    /** CPU time (user + system) the process used so far. */
    cpuMs: async (): Promise<number> => {
      const before = replies.length;
      child.send("cpu");
      return (await within("CPU", 10_000, () => replies.slice(before).find((r) => r.cpuMs !== undefined)))!.cpuMs!;
    },
    hostname: url.hostname,
    port: url.port,
    /** RSS after a full GC, the lower of two readings half a second apart. */
    stableRss: async () => {
      await sleep(500);
      return Math.min(await rss(), await rss());
    },
    stop: async () => {
      child.disconnect();
      await new Promise((r) => child.once("exit", r));
    },
  };
}

// Baseline: the same number of idle keep-alive connections (each made one request, then sits in the pool).
const idleApi = await startApiProcess();
let { hostname, port } = idleApi;
const rssStart = await idleApi.stableRss();
// One agent per connection: a shared one would reuse its free sockets instead of opening CLIENTS of them.
const agents: http.Agent[] = [];
let healthy = 0;
for (let i = 0; i < CLIENTS; i += 100) {
  await Promise.all(
    Array.from(
      { length: Math.min(100, CLIENTS - i) },
      () =>
        new Promise<void>((resolve, reject) => {
          const agent = new http.Agent({ keepAlive: true });
          agents.push(agent);
          http
            .get({ hostname, port, path: "/healthz", agent }, (res) => {
              res.resume();
              res.on("end", () => {
                healthy++;
                resolve();
              });
            })
            .on("error", reject);
        }),
    ),
  );
}
const idleSockets = agents.reduce(
  (n, a) => n + Object.values(a.freeSockets).reduce((m, s) => m + (s?.length ?? 0), 0),
  0,
);
const rssIdle = await idleApi.stableRss();
for (const a of agents) a.destroy();
await idleApi.stop();

const api = await startApiProcess();
({ hostname, port } = api);
const rssAfterIdle = await api.stableRss();

// The event-stream clients: each parses its frames and notes when it saw each step.
interface Client {
  seen: Map<number, number>;
  events: number;
  req: http.ClientRequest;
}
const clients: Client[] = [];
const path = `/crews/stream/status/${id}/events`;
for (let i = 0; i < CLIENTS; i += 100) {
  const batch = Array.from({ length: Math.min(100, CLIENTS - i) }, () => {
    const c: Client = { seen: new Map(), events: 0, req: undefined as unknown as http.ClientRequest };
    c.req = http.get({ hostname, port, path, headers: { authorization: `Bearer ${TOKEN}` }, agent: false }, (res) => {
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!frame.startsWith("id: ")) continue;
          c.events++;
          if (!frame.includes("\nevent: step\n")) continue;
          // The step's index without parsing the whole frame: the bench's own work stays small next to the API's.
          const index = /"step":\{"index":(\d+)/.exec(frame)?.[1];
          if (index !== undefined) c.seen.set(Number(index), at);
        }
      });
    });
    c.req.on("error", () => undefined);
    clients.push(c);
    return c;
  });
  await within("clients connected", 30_000, () => batch.every((c) => c.events >= 2));
}
const rssStreams = await api.stableRss();

// The floor: the same patches reaching an informer in this process.
const watched = new Map<number, number>();
const informer = new Informer<KubeObject>({
  client,
  log: silentLogger(),
  path: resourcePath(CREW_TASK_RESULTS, namespace),
  labelSelector: LABEL_EXECUTION,
});
informer.on((_event, object) => {
  const at = performance.now();
  const last = (object.spec as { steps?: { index: number }[] }).steps?.at(-1)?.index;
  if (last !== undefined && !watched.has(last)) watched.set(last, at);
});
await informer.start();

const latencies: number[] = [];
const watchLatencies: number[] = [];
/** Per patch, the first client to see it: the rest of each patch's spread is the fan-out to all clients. */
const firsts: number[] = [];
let missing = 0;
const cpuBefore = await api.cpuMs();
const benchCpuBefore = process.cpuUsage();
for (let k = 1; k <= PATCHES; k++) {
  steps.push(step(k));
  const t0 = performance.now();
  await client.mergePatch(resourcePath(CREW_TASK_RESULTS, namespace, resultName), {
    spec: { steps, stepCount: steps.length },
  });
  try {
    await within(`step ${k} at every client`, 10_000, () => clients.every((c) => c.seen.has(k)) && watched.has(k));
  } catch {
    missing += clients.filter((c) => !c.seen.has(k)).length;
  }
  const times = clients.filter((c) => c.seen.has(k)).map((c) => c.seen.get(k)! - t0);
  latencies.push(...times);
  firsts.push(Math.min(...times));
  if (watched.has(k)) watchLatencies.push(watched.get(k)! - t0);
  await sleep(200);
}

// CPU per patch: the patch loop's CPU time divided by the patches (including the 200 ms pauses' idle re-reads).
const apiCpuPerPatch = ((await api.cpuMs()) - cpuBefore) / PATCHES;
const benchCpu = process.cpuUsage(benchCpuBefore);
const benchCpuPerPatch = (benchCpu.user + benchCpu.system) / 1000 / PATCHES;
const perClient = (rssStreams - rssAfterIdle) / CLIENTS;
const perIdle = (rssIdle - rssStart) / CLIENTS;
console.log(
  `  idle keep-alive connections: ${idleSockets}/${CLIENTS} open (${healthy} answered), RSS ` +
    `${(rssStart / KB / KB).toFixed(1)} → ${(rssIdle / KB / KB).toFixed(1)} MB: ${(perIdle / KB).toFixed(1)} KB per connection`,
);
console.log(
  `  event-stream clients:        ${clients.filter((c) => c.events >= 2).length}/${CLIENTS} streaming, RSS ` +
    `${(rssAfterIdle / KB / KB).toFixed(1)} → ${(rssStreams / KB / KB).toFixed(1)} MB: ${(perClient / KB).toFixed(1)} KB per client ` +
    `(target ≤ 50 KB)`,
);
console.log(`  ratio (RSS per stream client / per idle connection): ${(perClient / perIdle).toFixed(2)}`);
const p = (xs: number[], q: number) => ms(percentile(xs, q));
console.log(
  `  patch → step event at the clients: p50 ${p(latencies, 50)}, p99 ${p(latencies, 99)}, max ${p(latencies, 100)} ` +
    `over ${latencies.length} deliveries (${missing} missing) (target p99 ≤ 100 ms)`,
);
console.log(`  patch → the first client to see it:  p50 ${p(firsts, 50)}, p99 ${p(firsts, 99)}`);
console.log(
  `  patch → the bench's own informer:  p50 ${p(watchLatencies, 50)}, p99 ${p(watchLatencies, 99)} over ${watchLatencies.length}`,
);
console.log(
  `  ratio (p99 clients / p99 informer): ${(percentile(latencies, 99) / percentile(watchLatencies, 99)).toFixed(2)}`,
);
console.log(
  `  CPU per patch (load-independent): API process ${apiCpuPerPatch.toFixed(1)} ms ` +
    `(${((apiCpuPerPatch * 1000) / CLIENTS).toFixed(0)} µs per client), bench process (the clients) ${benchCpuPerPatch.toFixed(1)} ms`,
);
console.log(`  load average at end ${load()}`);

for (const c of clients) c.req.destroy();
await informer.stop();
await api.stop();
client.close();
await deleteNamespace(cluster.kubeconfig, namespace);
cluster.stop();
process.exit(missing > 0 ? 1 : 0);
