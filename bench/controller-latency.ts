/**
 * bench/controller-latency: time from a task finishing (its runner's CrewTaskResult, or its Job's Complete condition,
 * whichever the bench sees first) to the execution's status showing the task Succeeded, p50 and p99 — against the
 * floor any controller has: one apiserver write and its watch event (a ConfigMap patch seen by a watch), measured
 * in the same run. Ratio = controller p50 / floor p50.
 *   npm run bench:controller-latency   [BENCH_EXECUTIONS=20 BENCH_CONCURRENCY=5 BENCH_KUBECONFIG=...]
 */
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import {
  benchCluster,
  benchNamespace,
  createExecutions,
  deleteNamespace,
  ms,
  percentile,
  startBenchController,
  watchWithTimes,
  writeCounter,
} from "./controller-support.ts";

const executions = Number(process.env.BENCH_EXECUTIONS ?? 20);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 5);
const TASKS = 3;

const cluster = benchCluster();
const client = new KubeClient(cluster.kubeConfig);
const namespace = await benchNamespace(cluster, { chain: { model: "mock", tasks: TASKS } });
const writes = writeCounter();
const controller = await startBenchController(cluster, namespace, writes.onWrite);

type Status = { tasks?: { name: string; phase: string }[]; phase?: string };
const finishedAt = new Map<string, number>(); // execution/task → first sign the task finished
const advancedAt = new Map<string, number>(); // execution/task → status shows it Succeeded
const doneAt = new Map<string, number>();
const first = (map: Map<string, number>, key: string, at: number) => {
  if (!map.has(key)) map.set(key, at);
};
const base = `/apis/kubecrew.io/v1alpha1/namespaces/${namespace}`;
const informers = [
  await watchWithTimes<KubeObject & { spec: { executionRef: { name: string }; taskName: string; output?: string } }>(
    client,
    `${base}/crewtaskresults`,
    (r, at) => {
      if (r.spec.output !== undefined) first(finishedAt, `${r.spec.executionRef.name}/${r.spec.taskName}`, at);
    },
  ),
  await watchWithTimes<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
    client,
    `/apis/batch/v1/namespaces/${namespace}/jobs`,
    (j, at) => {
      if (j.status?.conditions?.some((c) => c.type === "Complete" && c.status === "True")) {
        first(
          finishedAt,
          `${j.metadata!.labels!["kubecrew.io/execution"]}/${j.metadata!.labels!["kubecrew.io/task"]}`,
          at,
        );
      }
    },
  ),
  await watchWithTimes<KubeObject & { status?: Status }>(client, `${base}/crewexecutions`, (e, at) => {
    for (const t of e.status?.tasks ?? [])
      if (t.phase === "Succeeded") first(advancedAt, `${e.metadata!.name}/${t.name}`, at);
    if (e.status?.phase === "Succeeded" || e.status?.phase === "Failed") first(doneAt, e.metadata!.name!, at);
  }),
];

// The floor: one write and the watch event it causes.
const floor: number[] = [];
const cmPath = `/api/v1/namespaces/${namespace}/configmaps`;
await client.create(cmPath, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "floor" }, data: { n: "0" } });
let waitingFor: { n: string; resolve: () => void } | undefined;
const cmInformer = await watchWithTimes<KubeObject & { data?: Record<string, string> }>(client, cmPath, (cm) => {
  if (cm.metadata?.name === "floor" && waitingFor && cm.data?.n === waitingFor.n) waitingFor.resolve();
});
for (let i = 1; i <= 30; i++) {
  const started = performance.now();
  const seen = new Promise<void>((resolve) => (waitingFor = { n: String(i), resolve }));
  await client.mergePatch(`${cmPath}/floor`, { data: { n: String(i) } });
  await seen;
  floor.push(performance.now() - started);
}

let started = 0;
const names: string[] = [];
const startedAt = performance.now();
while (started < executions) {
  const batch = Math.min(concurrency, executions - started);
  const created = await createExecutions(client, namespace, "chain", batch, `lat-${started}`);
  names.push(...created);
  started += batch;
  const deadline = Date.now() + 120_000;
  while (!created.every((n) => doneAt.has(n))) {
    if (Date.now() > deadline) throw new Error("executions did not finish within 120 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}
const wallSeconds = (performance.now() - startedAt) / 1000;

const latencies: number[] = [];
const advancing: number[] = []; // the next task's ConfigMap and Job are created before the status is written
const finishing: number[] = []; // the last task: the status write alone
for (const name of names) {
  for (let i = 1; i <= TASKS; i++) {
    const key = `${name}/step${i}`;
    const f = finishedAt.get(key);
    const a = advancedAt.get(key);
    if (f === undefined || a === undefined) continue;
    const latency = Math.max(0, a - f);
    latencies.push(latency);
    (i < TASKS ? advancing : finishing).push(latency);
  }
}

const p50 = percentile(latencies, 50);
const floorP50 = percentile(floor, 50);
console.log(
  `controller latency: ${latencies.length} tasks of ${executions} executions (${TASKS} tasks each) in ${wallSeconds.toFixed(1)} s`,
);
console.log(
  `  task finished → status updated   p50 ${ms(p50)}   p99 ${ms(percentile(latencies, 99))}   max ${ms(Math.max(...latencies))}`,
);
console.log(
  `    of which: next task started  p50 ${ms(percentile(advancing, 50))}   p99 ${ms(percentile(advancing, 99))}`,
);
console.log(
  `              last task → done   p50 ${ms(percentile(finishing, 50))}   p99 ${ms(percentile(finishing, 99))}`,
);
console.log(`  floor (one write → its watch)    p50 ${ms(floorP50)}   p99 ${ms(percentile(floor, 99))}`);
console.log(`  ratio p50 latency / floor         ${(p50 / floorP50).toFixed(2)}`);

for (const i of [...informers, cmInformer]) await i.stop();
await controller.stop();
await deleteNamespace(cluster.kubeconfig, namespace);
client.close();
cluster.stop();
