/**
 * bench/flows (issue 33): a declarative flow of BENCH_FLOW_METHODS (20) methods on the local control plane with KWOK
 * (hack/local-cluster.sh up --kwok: one fake node; its stages move pods to Running and Succeeded, and the runner's
 * stand-in, controller-scale-runner.ts, writes each task's CrewTaskResult) — agent methods in a chain with, in the
 * middle, an `each` over BENCH_EACH_ITEMS (50) items, each item an agent run — against the same work as one-task crews
 * in the same run and the same shape: the chain's agents one after another, the items four at a time (the controller's
 * bound on an each's items running at once). The controller runs in this process, so its apiserver writes are counted.
 * Printed per side: method runs per minute (an item counts as a method run: one agent, one child execution, one Job)
 * and the flow's methods per minute; the controller's writes per method run (Events included) and by resource; and the
 * flow's rate as a share of the crews' (target ≥ 0.9). A warm-up round of both, not counted, then BENCH_ROUNDS (5)
 * rounds, the side that goes first alternating (crews in odd rounds, the flow in even ones); each round's figures and
 * load average are printed, then the medians of the counted rounds. Timing starts once the controller is idle (the
 * Flow judged, its Crews and their signing Secrets made).
 *   npm run bench:flows   [BENCH_FLOW_METHODS=20 BENCH_EACH_ITEMS=50 BENCH_ROUNDS=5 BENCH_KUBECONFIG=…]
 */
import { loadavg } from "node:os";
import { stringify } from "yaml";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { CREW_EXECUTIONS, FLOW_EXECUTIONS, FLOWS, LABEL_EXECUTION, resourcePath } from "../kube/resources.ts";
import { applyCrew, crewYaml } from "../test/e2e/support/fixture.ts";
import { RunnerStandIn } from "./controller-scale-runner.ts";
import {
  benchCluster,
  benchNamespace,
  deleteNamespace,
  startBenchController,
  watchWithTimes,
  writeCounter,
} from "./controller-support.ts";

const METHODS = Number(process.env.BENCH_FLOW_METHODS ?? 20);
const ITEMS = Number(process.env.BENCH_EACH_ITEMS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** The controller's bound on an each's items running at once (controller/flow-controller.ts). */
const EACH_AT_ONCE = 4;
const CHAIN = METHODS - 1;
const RUNS = CHAIN + ITEMS;
const load = () => loadavg()[0]!.toFixed(1);

/** m1 … m<n> in a chain, each asking one agent, but the middle one: an each over ITEMS items, an agent per item. */
function benchFlow(): Record<string, unknown> {
  const agent = (input: string) => ({
    call: "agent",
    with: { role: "Writer", goal: "Write one line", backstory: "Brief.", input },
  });
  const middle = Math.ceil(METHODS / 2);
  const items = Array.from({ length: ITEMS }, (_, i) => `'item ${i + 1}'`).join(", ");
  const methods: Record<string, unknown> = {};
  for (let i = 1; i <= METHODS; i++) {
    methods[`m${i}`] = {
      ...(i === 1 ? { start: true } : { listen: `m${i - 1}` }),
      do:
        i === middle
          ? { call: "each", in: `[${items}]`, do: [{ name: "write", action: agent("Write ${item}") }] }
          : agent(`Line ${i}`),
    };
  }
  return { schema: "crewai.flow/v1", name: "BenchFlow", methods };
}

const cluster = benchCluster(["--kwok"]);
const client = new KubeClient(cluster.kubeConfig);
// Crew tasks and method children may wait for the fake node's pods: long timeouts (a deadline is not measured here).
const namespace = await benchNamespace(cluster, {});
await applyCrew(
  cluster.kubeconfig,
  namespace,
  crewYaml("single", "mock", { tasks: 1, taskTimeout: 3600, executionTimeout: 7200 }),
);
await applyCrew(
  cluster.kubeconfig,
  namespace,
  stringify({
    apiVersion: FLOWS.apiVersion,
    kind: FLOWS.kind,
    metadata: {
      name: "bench",
      annotations: { "kubecrew.io/llm": JSON.stringify({ provider: "mock", model: "mock" }) },
    },
    spec: benchFlow(),
  }),
);

// What the bench sees: each execution's uid (the stand-in's results are owned by it) and end; each run's end.
const uids = new Map<string, string>();
const ended = new Map<string, (phase: string) => void>();
const endedPhases = new Map<string, string>();
const noteEnd = (name: string, phase: string | undefined) => {
  if (!phase || !["Succeeded", "Failed", "Stopped"].includes(phase) || endedPhases.has(name)) return;
  endedPhases.set(name, phase);
  ended.get(name)?.(phase);
};
type Phased = KubeObject & { status?: { phase?: string } };
/** When the bench first saw each crew execution (created by it, or by the controller for a method) and its end. */
const firstSeen = new Map<string, number>();
const endSeen = new Map<string, number>();
const executions = await watchWithTimes<Phased>(client, resourcePath(CREW_EXECUTIONS, namespace), (e, at) => {
  const name = e.metadata!.name!;
  uids.set(name, e.metadata!.uid!);
  if (!firstSeen.has(name)) firstSeen.set(name, at);
  if (["Succeeded", "Failed", "Stopped"].includes(e.status?.phase ?? "") && !endSeen.has(name)) endSeen.set(name, at);
  noteEnd(name, e.status?.phase);
});
/** When the bench first saw each execution's Job (label kubecrew.io/execution). */
const jobSeen = new Map<string, number>();
const jobs = await watchWithTimes(client, `/apis/batch/v1/namespaces/${namespace}/jobs`, (j, at) => {
  const execution = j.metadata?.labels?.[LABEL_EXECUTION];
  if (execution && !jobSeen.has(execution)) jobSeen.set(execution, at);
});
const runs = await watchWithTimes<Phased>(client, resourcePath(FLOW_EXECUTIONS, namespace), (r) =>
  noteEnd(r.metadata!.name!, r.status?.phase),
);
const flowReady = new Promise<void>((resolve) => {
  void watchWithTimes<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
    client,
    resourcePath(FLOWS, namespace),
    (f) => {
      if (f.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) resolve();
    },
  ).then((i) => informers.push(i));
});
const informers: { stop(): Promise<void> }[] = [executions, jobs, runs];
const runner = new RunnerStandIn({ client, namespace, uidOf: (e) => uids.get(e) });
await runner.start();
informers.push(runner);
const writes = writeCounter();
const controller = await startBenchController(cluster, namespace, writes.onWrite);

function whenEnded(name: string): Promise<string> {
  const known = endedPhases.get(name);
  if (known) return Promise.resolve(known);
  return new Promise((resolve) => ended.set(name, resolve));
}

async function create(path: string, body: KubeObject): Promise<void> {
  await client.create(path, body);
}

/** One crew execution, to its end. */
async function crew(name: string): Promise<void> {
  await create(resourcePath(CREW_EXECUTIONS, namespace), {
    apiVersion: CREW_EXECUTIONS.apiVersion,
    kind: CREW_EXECUTIONS.kind,
    metadata: { name, namespace },
    spec: { crewRef: { name: "single" }, inputs: { topic: "bench" } },
  });
  const phase = await whenEnded(name);
  if (phase !== "Succeeded") throw new Error(`bench:flows: crew execution ${name} ended ${phase}`);
}

interface Side {
  seconds: number;
  writes: number;
  byResource: [string, number][];
  /** Median ms from the last execution's end before one was created to its creation, as the bench's watch saw them. */
  gapMs: number;
  /** The same over the creations that waited for every execution before them to end (the chain's hand-overs). */
  chainGapMs: number;
  /** Where the time went, in ms: see phasesOf. */
  phases: Phases;
}

interface Phases {
  /** The timer's start to the first execution's creation (the flow's kickoff). */
  start: number;
  /** The first execution's creation to the last chain execution's end before the each. */
  before: number;
  /** The first item's creation to the last item's end. */
  each: number;
  /** From there to the last execution's end. */
  after: number;
  /** The last execution's end to the timer's end (the flow's last result and status). */
  end: number;
  /** Median of the executions' lives, creation to end as the bench's watch saw them. */
  life: number;
  /** The chain's executions (not the items): median creation to its Job, and Job to the execution's end. */
  chainToJob: number;
  chainJobToEnd: number;
}

/** The side's executions in creation order: the chain before the each, the items, the chain after. */
function phasesOf(from: number, to: number): Phases {
  const created = [...firstSeen].filter(([, at]) => at >= from && at <= to).sort((a, b) => a[1] - b[1]);
  const before = Math.ceil(METHODS / 2) - 1;
  const items = created.slice(before, before + ITEMS);
  const chain = [...created.slice(0, before), ...created.slice(before + ITEMS)];
  const endOf = (n: string) => endSeen.get(n) ?? NaN;
  const firstAt = created[0]?.[1] ?? NaN;
  const beforeEnd = before > 0 ? endOf(created[before - 1]![0]) : firstAt;
  const eachEnd = Math.max(...items.map(([n]) => endOf(n)));
  const lastEnd = Math.max(...created.map(([n]) => endOf(n)));
  return {
    start: firstAt - from,
    before: beforeEnd - firstAt,
    each: eachEnd - (items[0]?.[1] ?? NaN),
    after: lastEnd - eachEnd,
    end: to - lastEnd,
    life: median(created.map(([n, at]) => endOf(n) - at)),
    chainToJob: median(chain.map(([n, at]) => (jobSeen.get(n) ?? NaN) - at)),
    chainJobToEnd: median(chain.map(([n]) => endOf(n) - (jobSeen.get(n) ?? NaN))),
  };
}

const phaseText = (p: Phases) =>
  `start ${p.start.toFixed(0)}, chain before ${p.before.toFixed(0)}, each ${p.each.toFixed(0)},` +
  ` chain after ${p.after.toFixed(0)}, end ${p.end.toFixed(0)} ms (an execution's life ${p.life.toFixed(0)} ms; in` +
  ` the chain, creation to Job ${p.chainToJob.toFixed(0)} ms, Job to end ${p.chainJobToEnd.toFixed(0)} ms)`;

async function timed(work: () => Promise<void>): Promise<Side> {
  writes.reset();
  const started = performance.now();
  await work();
  const finished = performance.now();
  return {
    seconds: (finished - started) / 1000,
    writes: writes.total(),
    byResource: [...writes.byResource].sort((a, b) => b[1] - a[1]),
    gapMs: handOverMs(started, finished, false),
    chainGapMs: handOverMs(started, finished, true),
    phases: phasesOf(started, finished),
  };
}

/**
 * Over the executions created in [from, to]: how long after the latest end before it each one was created; `chain`:
 * only those created when every execution before them had ended (no each item running beside).
 */
function handOverMs(from: number, to: number, chain: boolean): number {
  const created = [...firstSeen].filter(([, at]) => at >= from && at <= to);
  const ends = [...endSeen].filter(([name]) => created.some(([n]) => n === name)).map(([, at]) => at);
  const gaps = created.flatMap(([, at]) => {
    const before = ends.filter((end) => end <= at);
    const running = created.filter(([n, t]) => t < at && (endSeen.get(n) ?? Infinity) > at).length;
    if (chain && running > 0) return [];
    return before.length ? [at - Math.max(...before)] : [];
  });
  return gaps.length ? median(gaps) : NaN;
}

/** The flow's work as crews: the chain's agents one after another, the items EACH_AT_ONCE at a time between them. */
async function crews(round: number): Promise<Side> {
  return timed(async () => {
    const middle = Math.ceil(METHODS / 2);
    let n = 0;
    for (let i = 1; i <= METHODS; i++) {
      if (i !== middle) {
        await crew(`c${round}-${n++}`);
        continue;
      }
      const items = Array.from({ length: ITEMS }, () => `c${round}-${n++}`);
      let next = 0;
      await Promise.all(
        Array.from({ length: EACH_AT_ONCE }, async () => {
          while (next < items.length) await crew(items[next++]!);
        }),
      );
    }
  });
}

async function flow(round: number): Promise<Side> {
  const name = `f${round}`;
  return timed(async () => {
    await create(resourcePath(FLOW_EXECUTIONS, namespace), {
      apiVersion: FLOW_EXECUTIONS.apiVersion,
      kind: FLOW_EXECUTIONS.kind,
      metadata: { name, namespace },
      spec: { flowRef: { name: "bench" }, inputs: {} },
    });
    const phase = await whenEnded(name);
    if (phase !== "Succeeded") throw new Error(`bench:flows: flow run ${name} ended ${phase}`);
  });
}

const perMinute = (side: Side, units: number) => (units / side.seconds) * 60;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const top = (side: Side) => side.byResource.map(([k, v]) => `${k} ${(v / RUNS).toFixed(2)}`).join(", ");

/** Waits until the controller has written nothing for `quietMs` (the Flow's Crews and Secrets made, their status). */
async function settled(quietMs = 3000): Promise<void> {
  for (;;) {
    const before = writes.total();
    await new Promise((r) => setTimeout(r, quietMs));
    if (writes.total() === before) return;
  }
}

console.log(
  `bench:flows on the local control plane with KWOK (one fake node): a flow of ${METHODS} methods (${CHAIN} agents` +
    ` in a chain, an each over ${ITEMS} items in the middle: ${RUNS} method runs) against ${RUNS} one-task crews` +
    ` (the chain's one after another, the items ${EACH_AT_ONCE} at a time); a warm-up round, then ${ROUNDS} rounds alternating which side goes first; load ${load()}`,
);
const flowRates: number[] = [];
const crewRates: number[] = [];
const ratios: number[] = [];
const flowWrites: number[] = [];
const crewWrites: number[] = [];
const flowChainGaps: number[] = [];
const crewChainGaps: number[] = [];
const loads: string[] = [];
try {
  await flowReady;
  await settled();
  // Round 0 warms both sides up (the apiserver's caches, the controller's code paths) and is not counted; then the
  // side that goes first alternates, so neither gains from the other's warm-up or pays for its leftovers.
  for (let round = 0; round <= ROUNDS; round++) {
    const crewsFirst = round % 2 === 1;
    let c: Side;
    let f: Side;
    if (crewsFirst) {
      c = await crews(round);
      f = await flow(round);
    } else {
      f = await flow(round);
      c = await crews(round);
    }
    const order = crewsFirst ? "crews first" : "flow first";
    const ratio = c.seconds / f.seconds;
    const head = round === 0 ? `warm-up (${order}, not counted)` : `round ${round} (${order})`;
    console.log(
      `${head}: flow ${f.seconds.toFixed(1)} s (${perMinute(f, RUNS).toFixed(1)} method runs/min,` +
        ` ${perMinute(f, METHODS).toFixed(1)} methods/min, ${(f.writes / RUNS).toFixed(2)} writes per method run);` +
        ` crews ${c.seconds.toFixed(1)} s (${perMinute(c, RUNS).toFixed(1)} crews/min,` +
        ` ${(c.writes / RUNS).toFixed(2)} writes per crew); ratio ${ratio.toFixed(2)}; load ${load()}`,
    );
    console.log(
      `  hand-over (an execution's end to the next one's creation, median): flow ${f.gapMs.toFixed(0)} ms,` +
        ` crews ${c.gapMs.toFixed(0)} ms; in the chain (nothing else running): flow ${f.chainGapMs.toFixed(0)} ms,` +
        ` crews ${c.chainGapMs.toFixed(0)} ms`,
    );
    console.log(`  flow:  ${phaseText(f.phases)}`);
    console.log(`  crews: ${phaseText(c.phases)}`);
    console.log(`  flow writes per method run:  ${top(f)}`);
    console.log(`  crew writes per crew:        ${top(c)}`);
    if (round === 0) continue;
    crewRates.push(perMinute(c, RUNS));
    flowRates.push(perMinute(f, RUNS));
    ratios.push(ratio);
    crewWrites.push(c.writes / RUNS);
    flowWrites.push(f.writes / RUNS);
    flowChainGaps.push(f.chainGapMs);
    crewChainGaps.push(c.chainGapMs);
    loads.push(load());
  }
} finally {
  await controller.stop();
  for (const i of informers) await i.stop();
  await deleteNamespace(cluster.kubeconfig, namespace).catch(() => undefined);
  cluster.stop();
}
console.log(
  `bench:flows: ${median(flowRates).toFixed(1)} method runs/min against ${median(crewRates).toFixed(1)} one-task` +
    ` crews/min; writes ${median(flowWrites).toFixed(2)} per method run against ${median(crewWrites).toFixed(2)} per` +
    ` crew; the flow's rate is ${median(ratios).toFixed(2)} of the crews' (target ≥ 0.9); chain hand-over` +
    ` ${median(flowChainGaps).toFixed(0)} ms against ${median(crewChainGaps).toFixed(0)} ms; rounds' ratios` +
    ` ${ratios.map((r) => r.toFixed(2)).join(" / ")}; load ${loads.join(" / ")} (now ${load()})`,
);
