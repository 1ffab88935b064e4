/**
 * bench/controller-heap: what the controller's caches hold per execution, in V8's heap, in seconds and without a
 * cluster. N finished 1-task executions, their Jobs and results (finished-execution.ts, with the metadata the apiserver
 * adds: uid, resourceVersion, timestamps, managedFields) are served as list pages to the controller's own informers
 * (`createCaches`: its transforms, string pool and indexes); then every execution is reconciled once, as a started
 * controller does, and waits in the work queue for its TTL cleanup. Printed: bytes of heap per execution, by cache and
 * for the reconcile's leftovers — the part of the controller's RSS that grows with executions (bench:controller-memory
 * measures the whole process against a real apiserver).
 *   npm run bench:controller-heap   [BENCH_HEAP_COUNT=10000]
 */
import { parse } from "yaml";
import { crewSpec as crewSpecSchema } from "../core/crew-resource.ts";
import { silentLogger } from "../core/logger.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { createCaches } from "../controller/caches.ts";
import { ExecutionReconciler } from "../controller/execution-reconciler.ts";
import { WorkQueue } from "../kube/runtime/work-queue.ts";
import { crewYaml } from "../test/e2e/support/fixture.ts";
import { finishedExecution, stamp } from "./finished-execution.ts";

const count = Number(process.env.BENCH_HEAP_COUNT ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc (npm run bench:controller-heap)");
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const namespace = "memory-bench";
const crewDoc = parse(crewYaml("tasks-1", "mock", { tasks: 1, taskTimeout: 3600, executionTimeout: 7200 })) as {
  spec: unknown;
};
const crew = crewSpecSchema.parse(crewDoc.spec);
let resourceVersion = 1000;
/** The metadata the apiserver adds to what a client creates. */
function asServed(object: KubeObject, createdMs: number, managers: string[]): KubeObject {
  return {
    ...object,
    metadata: {
      ...object.metadata,
      uid: crypto.randomUUID(),
      resourceVersion: String(resourceVersion++),
      generation: 1,
      creationTimestamp: stamp(createdMs),
      managedFields: managers.map((manager) => ({
        manager,
        operation: "Update",
        apiVersion: object.apiVersion,
        time: stamp(createdMs),
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:labels": {} }, "f:spec": {}, "f:status": {} },
      })),
    },
  };
}

// Executions kicked off at 2,000 a minute (the timestamps they share, as in a busy hour).
const t0 = Date.UTC(2026, 10, 26, 6, 0, 0);
const pages = { executions: [] as KubeObject[], jobs: [] as KubeObject[], results: [] as KubeObject[] };
for (let i = 0; i < count; i++) {
  const startedMs = t0 + i * 30;
  const name = `m-${i}`;
  const execution = asServed(
    { apiVersion: "kubecrew.io/v1alpha1", kind: "CrewExecution", metadata: { name, namespace } },
    startedMs,
    ["kubecrew-api", "kubecrew-controller"],
  );
  const o = finishedExecution({
    crewName: "tasks-1",
    crew,
    namespace,
    name,
    uid: execution.metadata!.uid!,
    startedMs,
    runnerServiceAccount: "kubecrew-runner",
  });
  pages.executions.push({ ...execution, spec: o.execution.spec, status: o.executionStatus });
  pages.jobs.push({
    ...asServed(o.job, startedMs, ["kubecrew-controller", "kube-controller-manager"]),
    status: o.jobStatus,
  });
  pages.results.push(asServed(o.result, startedMs + 900, ["kubecrew-runner"]));
}
/** Each list answer as the apiserver sends it: JSON text, parsed anew by the client (so every object is its own). */
const texts = new Map(
  Object.entries(pages).map(([kind, items]) => [kind, JSON.stringify({ metadata: { resourceVersion: "1" }, items })]),
);
pages.executions = pages.jobs = pages.results = [];

const kindOf = (path: string) =>
  path.includes("/crewexecutions")
    ? "executions"
    : path.includes("/jobs")
      ? "jobs"
      : path.includes("/crewtaskresults")
        ? "results"
        : "";
const client = {
  list<T>(path: string) {
    const text = texts.get(kindOf(path));
    return Promise.resolve(
      JSON.parse(text ?? '{"metadata":{"resourceVersion":"1"},"items":[]}') as {
        items: T[];
        metadata: { resourceVersion?: string };
      },
    );
  },
  watch(_path: string, _query: unknown, _onEvent: unknown, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve()));
  },
};

const caches = createCaches({ client, log: silentLogger(), namespace, watchTimeoutSeconds: 300 });
const perExecution = (bytes: number) => `${((bytes / count) | 0).toLocaleString("en")} B`;
const steps: [string, number][] = [];
let before = heapUsed();
for (const [name, informer] of [
  ["executions", caches.executions],
  ["Jobs", caches.jobs],
  ["results", caches.results],
] as const) {
  await informer.start();
  const after = heapUsed();
  steps.push([`${name} cache`, after - before]);
  before = after;
}
await caches.crews.start();
const queue = new WorkQueue();
const reconciler = new ExecutionReconciler({
  client: {} as never, // a finished execution with its children in the caches: nothing to write
  caches,
  jobSettings: {
    defaultImage: "kubecrew:bench",
    defaultServiceAccount: "kubecrew-runner",
    runnerCommand: ["kubecrew"],
  },
  finishedTtlSeconds: 86_400,
  now: () => new Date(t0 + count * 30 + 60_000),
  log: silentLogger(),
  events: { record: () => undefined },
  webhooks: { enqueue: () => true },
});
for (const execution of caches.executions.list()) {
  const key = `${namespace}/${execution.metadata!.name!}`;
  const { requeueAfterMs } = await reconciler.reconcile(key);
  if (requeueAfterMs !== undefined) queue.addAfter(key, requeueAfterMs);
}
steps.push(["reconciled once, waiting for the TTL cleanup", heapUsed() - before]);
const total = steps.reduce((sum, [, bytes]) => sum + bytes, 0);
console.log(`controller heap: ${count} finished 1-task executions with their Job and result, per execution:`);
for (const [what, bytes] of steps) console.log(`  ${what.padEnd(46)} ${perExecution(bytes)}`);
console.log(`  ${"in all".padEnd(46)} ${perExecution(total)} (${(total / 2 ** 20).toFixed(1)} MB)`);
queue.shutDown();
for (const informer of [caches.executions, caches.crews, caches.jobs, caches.results]) await informer.stop();
