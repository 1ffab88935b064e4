/**
 * bench/controller-throughput: executions per minute of instant 1-task crews on one controller replica, against
 * bare Jobs running the same CLI in the same hardened pod on the same node (the floor the cluster itself sets);
 * ratio = kubecrew rate / bare Job rate. Also counts the controller's apiserver writes by resource for 1-task and
 * 3-task crews, and from the two the cost of each task and the cost of each execution, Events apart (target: at most
 * 3 per task besides the runner's one CrewTaskResult).
 *   npm run bench:controller-throughput   [BENCH_EXECUTIONS=40 BENCH_KUBECONFIG=...]
 *   npm run bench:controller-throughput -- --kind   the same on a kind cluster (hack/kind-e2e.sh up … down): real
 *     kubelet, containerd and runc, task pods as containers of the built image
 * The local node (default) runs pods as local processes: the controller's own cost shows; on kind the containers'.
 * Then tasks side by side: a crew of 3 asynchronous tasks and a fourth joining them (context: all three), against the
 * same 4 tasks run one after another, each task a mock model sleeping BENCH_TASK_MS (2000): each crew's median wall
 * time (kickoff to Succeeded, BENCH_DAG_EXECUTIONS=5 executions of each at once) and the controller's writes per task.
 */
import { runnerSettings } from "../core/crew.ts";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { taskJob } from "../controller/task-job.ts";
import { applyCrew, RUNNER_SA } from "../test/e2e/support/fixture.ts";
import {
  benchCluster,
  benchNamespace,
  createExecutions,
  deleteNamespace,
  onKind,
  percentile,
  runnerImage,
  startBenchController,
  watchWithTimes,
  writeCounter,
} from "./controller-support.ts";

const count = Number(process.env.BENCH_EXECUTIONS ?? 40);

const cluster = benchCluster();
const client = new KubeClient(cluster.kubeConfig);
const namespace = await benchNamespace(cluster, {
  instant: { model: "mock", tasks: 1 },
  triple: { model: "mock", tasks: 3 },
});
const taskMs = Number(process.env.BENCH_TASK_MS ?? 2000);
const dagCount = Number(process.env.BENCH_DAG_EXECUTIONS ?? 5);
/** Four tasks of a mock model sleeping taskMs: the first three asynchronous and the fourth joining them, or in a row. */
const fourTasks = (name: string, parallel: boolean) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: "sleep-${taskMs}" }
  agents:
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}" }
  tasks:
${["a", "b", "c"].map((t) => `    - { name: ${t}, agent: writer, description: "Part ${t} on {topic}", expectedOutput: "Text ${t}", asyncExecution: ${parallel} }`).join("\n")}
    - { name: join, agent: writer, description: "Join on {topic}", expectedOutput: "Text", context: [a, b, c] }
  runner: { retries: 0, taskTimeoutSeconds: 120 }
`;
await applyCrew(cluster.kubeconfig, namespace, fourTasks("parallel", true));
await applyCrew(cluster.kubeconfig, namespace, fourTasks("sequential", false));
const writes = writeCounter();
const controller = await startBenchController(cluster, namespace, writes.onWrite);

const done = new Map<string, number>();
const base = `/apis/kubecrew.io/v1alpha1/namespaces/${namespace}`;
const executionsInformer = await watchWithTimes<KubeObject & { status?: { phase?: string } }>(
  client,
  `${base}/crewexecutions`,
  (e, at) => {
    if (e.status?.phase === "Succeeded" && !done.has(e.metadata!.name!)) done.set(e.metadata!.name!, at);
  },
);
const jobsDone = new Map<string, number>();
const jobsInformer = await watchWithTimes<
  KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
>(client, `/apis/batch/v1/namespaces/${namespace}/jobs`, (j, at) => {
  if (
    j.status?.conditions?.some((c) => c.type === "Complete" && c.status === "True") &&
    !jobsDone.has(j.metadata!.name!)
  )
    jobsDone.set(j.metadata!.name!, at);
});

async function waitAll(names: string[], seen: Map<string, number>, what: string) {
  const deadline = Date.now() + 300_000;
  while (!names.every((n) => seen.has(n))) {
    if (Date.now() > deadline)
      throw new Error(`${what}: ${names.filter((n) => !seen.has(n)).length} not done within 300 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Warm-up (node, caches), untimed.
await waitAll(await createExecutions(client, namespace, "instant", 3, "warm"), done, "warm-up");

// kubecrew: instant 1-task crews, all kicked off at once.
writes.reset();
let t0 = performance.now();
const names = await createExecutions(client, namespace, "instant", count, "tp");
await waitAll(names, done, "executions");
const kubecrewSeconds = (performance.now() - t0) / 1000;
const oneTaskWrites = new Map(writes.byResource);

// 3-task crews: the per-task write count without the per-execution start.
writes.reset();
const tripleNames = await createExecutions(client, namespace, "triple", 10, "tri");
await waitAll(tripleNames, done, "3-task executions");
const tripleWrites = new Map(writes.byResource);

// Tasks side by side against the same tasks in a row: wall time from kickoff to Succeeded, and the writes.
async function fourTaskRuns(crew: string) {
  writes.reset();
  const start = performance.now();
  const runs = await createExecutions(client, namespace, crew, dagCount, crew);
  await waitAll(runs, done, `${crew} executions`);
  const seconds = runs.map((n) => (done.get(n)! - start) / 1000);
  return { median: percentile(seconds, 50), writes: new Map(writes.byResource) };
}
const parallelRuns = await fourTaskRuns("parallel");
const sequentialRuns = await fourTaskRuns("sequential");

console.log(`kubecrew: ${count} executions in ${kubecrewSeconds.toFixed(1)} s`);

// The floor: bare Jobs running the same CLI (`kubecrew --version`) in the same pod spec.
const dummyAssignment = {
  execution: { id: "bare", crew: "bare", namespace, uid: "bare" },
  task: { index: 0, name: "bare", description: "d", expectedOutput: "o" },
  agent: { name: "a", role: "r", goal: "g", backstory: "", tools: [], mcps: [], apps: [], maxIter: 20 },
  context: [],
  inputs: {},
  tools: { mcpServers: [], allowedHosts: [] },
  runtime: "kubecrew" as const,
};
const jobNames = Array.from({ length: count }, (_, i) => `bare-${i}`);
t0 = performance.now();
await Promise.all(
  jobNames.map((name) => {
    const job = taskJob(
      { name, namespace, uid: "00000000-0000-0000-0000-000000000000", crew: "bare" },
      dummyAssignment,
      runnerSettings.parse({ taskTimeoutSeconds: 120, executionTimeoutSeconds: 600, retries: 0 }),
      {
        defaultImage: runnerImage,
        ...(onKind ? { imagePullPolicy: "Never" as const } : {}),
        defaultServiceAccount: RUNNER_SA,
        runnerCommand: ["kubecrew", "--version"],
      },
    ) as {
      metadata: Record<string, unknown>;
      spec: {
        template: {
          spec: { containers: { command: string[]; volumeMounts: { name: string }[] }[]; volumes: { name: string }[] };
        };
      };
    };
    const pod = job.spec.template.spec;
    pod.containers[0]!.command = ["kubecrew", "--version"];
    // No assignment: the bare Job keeps only the /tmp volume.
    pod.volumes = pod.volumes.filter((v) => v.name !== "assignment");
    pod.containers[0]!.volumeMounts = pod.containers[0]!.volumeMounts.filter((m) => m.name !== "assignment");
    return client
      .create(`/apis/batch/v1/namespaces/${namespace}/jobs`, { ...job, metadata: { name, namespace } })
      .then(() => undefined);
  }),
);
await waitAll(jobNames, jobsDone, "bare Jobs");
const bareSeconds = (performance.now() - t0) / 1000;

const perMinute = (n: number, s: number) => (n / s) * 60;
const kubecrewRate = perMinute(count, kubecrewSeconds);
const bareRate = perMinute(count, bareSeconds);
const describe = (m: Map<string, number>, per: number) =>
  [...m]
    .sort()
    .map(([k, v]) => `${k} ${(v / per).toFixed(2)}`)
    .join(", ");
const isEvent = (resource: string) => resource.endsWith(" events");
const objectWrites = (m: Map<string, number>) => [...m].filter(([k]) => !isEvent(k)).reduce((n, [, v]) => n + v, 0);
const eventWrites = (m: Map<string, number>) => [...m].filter(([k]) => isEvent(k)).reduce((n, [, v]) => n + v, 0);
// An execution of n tasks costs a·n + b writes: a per task, b once per execution. Two crew sizes give both.
const perExecution = { one: objectWrites(oneTaskWrites) / count, three: objectWrites(tripleWrites) / 10 };
const perTask = (perExecution.three - perExecution.one) / 2;
const fixed = perExecution.one - perTask;
const eventsPerTask = (eventWrites(tripleWrites) / 10 - eventWrites(oneTaskWrites) / count) / 2;
const eventsFixed = eventWrites(oneTaskWrites) / count - eventsPerTask;

console.log(
  `controller throughput on ${onKind ? "kind (real pods)" : "the local node"}: ${count} instant 1-task executions` +
    ` at once, one controller replica`,
);
console.log(`  kubecrew executions      ${kubecrewSeconds.toFixed(1)} s → ${kubecrewRate.toFixed(0)} per minute`);
console.log(`  bare Jobs (same pod)     ${bareSeconds.toFixed(1)} s → ${bareRate.toFixed(0)} per minute`);
console.log(`  ratio kubecrew / bare    ${(kubecrewRate / bareRate).toFixed(2)}`);
console.log(`apiserver writes by the controller (the runner adds 1 CrewTaskResult per task):`);
console.log(`  per 1-task execution     ${perExecution.one.toFixed(2)}  [${describe(oneTaskWrites, count)}]`);
console.log(`  per 3-task execution     ${perExecution.three.toFixed(2)}  [${describe(tripleWrites, 10)}]`);
console.log(
  `  per task                 ${perTask.toFixed(2)} (target at most 3: ConfigMap, Job, status patch)` +
    ` + ${fixed.toFixed(2)} per execution (its Running status)`,
);
console.log(
  `  Events, best effort      ${eventsPerTask.toFixed(2)} per task + ${eventsFixed.toFixed(2)} per execution` +
    ` (TaskStarted, TaskSucceeded; Execution*)`,
);

const fourTaskWrites = (m: Map<string, number>) => (objectWrites(m) / dagCount - fixed) / 4;
console.log(
  `tasks side by side: 3 asynchronous tasks and a fourth joining them, each task ${taskMs} ms of mock model,` +
    ` ${dagCount} executions of each crew at once`,
);
for (const [label, runs] of [
  ["parallel (3 async + join)", parallelRuns],
  ["sequential (4 in a row)  ", sequentialRuns],
] as const) {
  console.log(
    `  ${label}  median wall time ${runs.median.toFixed(1)} s; writes per task ${fourTaskWrites(runs.writes).toFixed(2)}` +
      ` [${describe(runs.writes, dagCount)}]`,
  );
}
console.log(`  speed-up                    ${(sequentialRuns.median / parallelRuns.median).toFixed(2)}×`);

await executionsInformer.stop();
await jobsInformer.stop();
await controller.stop();
await deleteNamespace(cluster.kubeconfig, namespace);
client.close();
cluster.stop();
