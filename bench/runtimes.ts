/**
 * bench/runtimes (issue 30): the two runtimes, `kubecrew` (the TypeScript runner) and `crewai` (the real CrewAI in the
 * adapter), side by side in one run against the OpenAI-compatible fixture, in `kubecrew dev` and on the local control
 * plane (hack/local-cluster.sh: its local node runs each task pod's command on this machine):
 *   - task start: from the task's process start to its first model request — in kubecrew dev the runner process starts
 *     at the kickoff; on the cluster, from the moment the task pod's container is seen running (a watch on pods);
 *   - a 3-task sequential crew end to end: kickoff to /status completed (three Jobs on the cluster);
 *   - the runner's peak RSS in the 1-task crew (its process and, on crewai, the adapter's: bench/runner-peaks.ts).
 * BENCH_ROUNDS (3) rounds alternate the runtimes; medians (and the spread) are printed. The target: the crewai
 * runtime's task start ≤ 4 s on the local node.
 *   npm run bench:runtimes   [BENCH_ROUNDS=3 BENCH_WHERE=dev,cluster]
 */
import { loadavg } from "node:os";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { PODS, resourcePath } from "../kube/resources.ts";
import { startTestDev, tokens } from "../test/support/dev-server.ts";
import { startLlmFixture, type LlmFixture } from "../test/support/llm-fixture.ts";
import {
  applyCrew,
  crewNamespace,
  kickoff as clusterKickoff,
  releaseCrewNamespace,
  startClusterApi,
  startControllerProcess,
  status as clusterStatus,
} from "../test/e2e/support/fixture.ts";
import { benchCluster, watchWithTimes } from "./controller-support.ts";
import { RunnerPeaks } from "./runner-peaks.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WHERE = (process.env.BENCH_WHERE ?? "dev,cluster").split(",");
const RUNTIMES = ["kubecrew", "crewai"] as const;
type Runtime = (typeof RUNTIMES)[number];
const load = () => loadavg()[0]!.toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A crew of `tasks` sequential tasks on `runtime`, its model the fixture. */
function crew(name: string, runtime: Runtime, tasks: number, baseURL: string): string {
  const list = Array.from({ length: tasks }, (_, i) => i + 1)
    .map(
      (i) =>
        `    - { name: step${i}, agent: writer, description: "Step ${i} on {topic}", expectedOutput: "Text ${i}" }`,
    )
    .join("\n");
  return `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  runtime: ${runtime}
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: bench-model, baseURL: "${baseURL}" }
  agents:
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes well." }
  tasks:
${list}
  runner: { retries: 0, taskTimeoutSeconds: 300, executionTimeoutSeconds: 900 }
`;
}

/** The fixture keeps no times: each request is stamped as the fixture records it. */
function stampRequests(llm: LlmFixture): number[] {
  const times: number[] = [];
  const push = llm.requests.push.bind(llm.requests);
  llm.requests.push = (...items) => {
    for (const _ of items) times.push(performance.now());
    return push(...items);
  };
  return times;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 600_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(25);
  }
}

interface Side {
  /** Kicks `crew` off; answers how to read its status (running, completed or error). */
  kickoff(crew: string): Promise<() => Promise<{ status: string; error?: string }>>;
  /** When the task's process started, at or after `since` (performance.now() ms). */
  processStart(since: number): Promise<number>;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
const seconds = (xs: number[]) =>
  `${(median(xs) / 1000).toFixed(2)} s (${xs.map((x) => (x / 1000).toFixed(2)).join(", ")})`;

const peaks = new RunnerPeaks();

async function measure(where: string, side: Side, times: number[]): Promise<Record<Runtime, Record<string, number[]>>> {
  const figures = Object.fromEntries(RUNTIMES.map((r) => [r, { start: [], crew: [], rss: [] }])) as unknown as Record<
    Runtime,
    Record<string, number[]>
  >;
  const finished = async (state: () => Promise<{ status: string; error?: string }>) => {
    const body = await until("the execution's end", async () => {
      const s = await state();
      return s.status === "running" ? undefined : s;
    });
    if (body.status !== "completed") throw new Error(`${where}: the execution ended ${JSON.stringify(body)}`);
  };
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which runtime goes first, so a slow moment of the machine does not always fall on one.
    const order = round % 2 ? RUNTIMES : [...RUNTIMES].reverse();
    for (const runtime of order) {
      const since = performance.now();
      const asked = times.length;
      peaks.reset();
      const state = await side.kickoff(`start-${runtime}`);
      const first = await until("the first model request", async () => times[asked]);
      const started = await side.processStart(since);
      figures[runtime].start!.push(first - started);
      await finished(state);
      const rss = peaks.largestMiB();
      figures[runtime].rss!.push(rss);

      const kicked = performance.now();
      await finished(await side.kickoff(`three-${runtime}`));
      figures[runtime].crew!.push(performance.now() - kicked);
      console.error(
        `bench:runtimes ${where} round ${round} ${runtime}: start ${((first - started) / 1000).toFixed(2)} s, ` +
          `3 tasks ${((performance.now() - kicked) / 1000).toFixed(2)} s, runner peak RSS ${rss.toFixed(0)} MiB (load ${load()})`,
      );
    }
  }
  return figures;
}

function report(where: string, figures: Record<Runtime, Record<string, number[]>>): void {
  console.log(`\n${where} (${ROUNDS} rounds; median, then each round)`);
  console.log(`  task start (process start → first model request)`);
  for (const r of RUNTIMES) console.log(`    ${r.padEnd(9)} ${seconds(figures[r].start!)}`);
  console.log(`  3-task crew, kickoff → completed`);
  for (const r of RUNTIMES) console.log(`    ${r.padEnd(9)} ${seconds(figures[r].crew!)}`);
  console.log(`  the runner's peak RSS (1-task crew; on crewai with its adapter)`);
  for (const r of RUNTIMES) {
    const mib = figures[r].rss!;
    console.log(`    ${r.padEnd(9)} ${median(mib).toFixed(0)} MiB (${mib.map((x) => x.toFixed(0)).join(", ")})`);
  }
  const crewai = median(figures.crewai.start!) / 1000;
  console.log(`  crewai task start ${crewai.toFixed(2)} s: ${crewai <= 4 ? "within" : "ABOVE"} the 4 s target`);
}

async function inDev(llm: LlmFixture, times: number[]): Promise<void> {
  const crews: Record<string, string> = {};
  for (const runtime of RUNTIMES) {
    crews[`start-${runtime}.yaml`] = crew(`start-${runtime}`, runtime, 1, llm.baseURL);
    crews[`three-${runtime}.yaml`] = crew(`three-${runtime}`, runtime, 3, llm.baseURL);
  }
  const dev = await startTestDev(crews);
  const auth = { authorization: `Bearer ${tokens.org}` };
  let kickedAt = 0;
  try {
    const side: Side = {
      async kickoff(name) {
        kickedAt = performance.now();
        const res = await fetch(`${dev.url}/crews/${name}/kickoff`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ inputs: { topic: "tides" } }),
        });
        const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
        return async () =>
          (await (await fetch(`${dev.url}/crews/${name}/status/${id}`, { headers: auth })).json()) as never;
      },
      // kubecrew dev starts the runner process as it takes the kickoff.
      processStart: async () => kickedAt,
    };
    report("kubecrew dev", await measure("dev", side, times));
  } finally {
    await dev.stop();
  }
}

async function onCluster(llm: LlmFixture, times: number[]): Promise<void> {
  const cluster = benchCluster();
  const namespace = await crewNamespace(cluster.kubeconfig, "bench-runtimes");
  const controller = await startControllerProcess(cluster.kubeconfig, namespace, { env: { LOG_LEVEL: "info" } });
  const api = await startClusterApi(cluster.kubeconfig, namespace);
  const client = new KubeClient(cluster.kubeConfig);
  // When each pod's container was first seen running (or already ended, if its running state was never seen).
  const running = new Map<string, number>();
  const pods = await watchWithTimes<KubeObject>(client, resourcePath(PODS, namespace), (pod, at) => {
    const state = (pod as { status?: { containerStatuses?: { state?: Record<string, unknown> }[] } }).status
      ?.containerStatuses?.[0]?.state;
    const name = pod.metadata?.name ?? "";
    if (state && (state.running || state.terminated) && !running.has(name)) running.set(name, at);
  });
  try {
    for (const runtime of RUNTIMES) {
      await applyCrew(cluster.kubeconfig, namespace, crew(`start-${runtime}`, runtime, 1, llm.baseURL));
      await applyCrew(cluster.kubeconfig, namespace, crew(`three-${runtime}`, runtime, 3, llm.baseURL));
    }
    const side: Side = {
      async kickoff(name) {
        const id = await clusterKickoff(api, name);
        return () => clusterStatus(api, name, id) as never;
      },
      processStart: (since) =>
        until("the task pod running", async () => {
          const seen = [...running.values()].filter((at) => at >= since).sort((a, b) => a - b);
          return seen[0];
        }),
    };
    report("local control plane", await measure("cluster", side, times));
  } finally {
    await pods.stop();
    await api.stop();
    await controller.kill("SIGTERM");
    await releaseCrewNamespace(cluster.kubeconfig, namespace).catch(() => undefined);
    cluster.stop();
  }
}

const llm = await startLlmFixture();
const times = stampRequests(llm);
try {
  console.log(`bench:runtimes — load average at start ${load()}, ${ROUNDS} rounds, ${WHERE.join(" and ")}`);
  if (WHERE.includes("dev")) await inDev(llm, times);
  if (WHERE.includes("cluster")) await onCluster(llm, times);
  console.log(`\nload average at the end ${load()}`);
} finally {
  peaks.stop();
  await llm.stop();
}
