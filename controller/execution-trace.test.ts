import { SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTracing, type Tracing } from "../platform/telemetry/tracing.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import * as r from "../kube/resources.ts";
import { StaleObjectError } from "../kube/runtime/worker.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { createCaches, type Caches } from "./caches.ts";
import { ExecutionReconciler } from "./execution-reconciler.ts";
import { executionSpanId } from "./execution-trace.ts";
import type { WebhookDelivery } from "./webhooks.ts";

/**
 * The execution's span on a cluster, through the execution reconciler against a recording apiserver, with this
 * process's tracing exporting into memory: kickoff → execution → start_task, the task pod's TRACEPARENT under
 * start_task, and one `execution <crew>` span however often the finished execution is reconciled.
 */
const NS = "team-a";
const ID = "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10";
const KEY = `${NS}/${ID}`;
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const KICKOFF_SPAN = "00f067aa0ba902b7";
const CREATED = "2026-03-01T10:00:00Z";
const T0 = Date.parse("2026-03-01T10:00:02.500Z");
const log = pino({ level: "silent" });
const executionPath = r.resourcePath(r.CREW_EXECUTIONS, NS, ID);

const crewObject: KubeObject = {
  apiVersion: r.CREWS.apiVersion,
  kind: r.CREWS.kind,
  metadata: { name: "research", namespace: NS, uid: "crew-uid", generation: 1 },
  spec: {
    agents: [{ name: "w", role: "Writer", goal: "Write" }],
    tasks: [{ name: "draft", agent: "w", description: "Draft", expectedOutput: "A draft" }],
    runner: { retries: 0 },
  },
};
const executionObject = (uid = "exec-uid", traceFlags = "01"): KubeObject => ({
  apiVersion: r.CREW_EXECUTIONS.apiVersion,
  kind: r.CREW_EXECUTIONS.kind,
  metadata: {
    name: ID,
    namespace: NS,
    uid,
    generation: 1,
    creationTimestamp: CREATED,
    annotations: { [r.ANNOTATION_TRACEPARENT]: `00-${TRACE}-${KICKOFF_SPAN}-${traceFlags}` },
  },
  spec: { crewRef: { name: "research" }, inputs: {}, webhooks: { crew: "http://hooks.test/crew" } },
});

let kube: RecordingKube;
let caches: Caches;
let clock: number;
let hooks: WebhookDelivery[];
let memory: InMemorySpanExporter;
let tracing: Tracing | undefined;

function reconciler(): ExecutionReconciler {
  return new ExecutionReconciler({
    client: kube,
    caches,
    jobSettings: { defaultImage: "kubecrew:test", defaultServiceAccount: "runner", runnerCommand: ["kubecrew"] },
    finishedTtlSeconds: 60,
    now: () => new Date(clock),
    log,
    events: { record: () => {} },
    webhooks: { enqueue: (delivery) => (hooks.push(delivery), true) },
  });
}

function given(execution: KubeObject): void {
  caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), execution));
  caches.crews.upsert(kube.seed(r.resourcePath(r.CREWS, NS), crewObject));
}

/** The task's Job ended (completed, or failed with its runner's report) and its result is in the cache. */
function taskEnded(outcome: { error?: string } = {}): void {
  const job = kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`))!;
  const condition = outcome.error ? { type: "Failed", status: "True", reason: "BackoffLimitExceeded" } : undefined;
  caches.jobs.upsert({
    ...job,
    // A later version than the one the controller cached as it created the Job.
    metadata: { ...job.metadata, resourceVersion: String(Number(job.metadata!.resourceVersion) + 1000) },
    status: {
      startTime: CREATED,
      conditions: [condition ?? { type: "Complete", status: "True" }],
      ...(outcome.error ? { failed: 1 } : { succeeded: 1 }),
    },
  });
  caches.results.upsert({
    apiVersion: r.CREW_TASK_RESULTS.apiVersion,
    kind: r.CREW_TASK_RESULTS.kind,
    metadata: {
      name: `${ID}-0`,
      namespace: NS,
      labels: { [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: "draft" },
      creationTimestamp: CREATED,
    },
    spec: {
      executionRef: { name: ID },
      taskName: "draft",
      taskIndex: 0,
      agent: "Writer",
      attempt: 1,
      executionTime: 2,
      ...(outcome.error ? { error: outcome.error } : { output: "the draft" }),
    },
  });
}

/** The runner container's TRACEPARENT on the task's Job as created. */
function podTraceparent(): string | undefined {
  const job = kube.writes.find((w) => w.verb === "create" && w.path === r.resourcePath(r.JOBS, NS))?.body as {
    spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  };
  return job.spec.template.spec.containers[0]!.env?.find((e) => e.name === "TRACEPARENT")?.value;
}

/** The spans exported so far (the batch sent: tracing stopped). */
async function exported(): Promise<ReadableSpan[]> {
  await tracing?.stop();
  tracing = undefined;
  return memory.getFinishedSpans();
}

beforeEach(() => {
  kube = new RecordingKube();
  caches = createCaches({ client: kube, log, namespace: NS, watchTimeoutSeconds: 60 });
  clock = T0;
  hooks = [];
  memory = new InMemorySpanExporter();
  // The exporter's own shutdown forgets what it holds: keep it for the test to read.
  const exporter = { export: memory.export.bind(memory), shutdown: async () => {} };
  tracing = startTracing({ env: {}, serviceName: "kubecrew-controller", exporter });
});

afterEach(async () => {
  await tracing?.stop();
  tracing = undefined;
});

describe("the execution's span on a cluster", () => {
  it("is the kickoff's child and the parent of the Job starts, whose pods continue under them", async () => {
    given(executionObject());
    await reconciler().reconcile(KEY);
    clock = T0 + 4000;
    taskEnded();
    await reconciler().reconcile(KEY);

    const spans = await exported();
    expect(spans.map((s) => s.name).sort()).toEqual(["execution research", "start_task draft"]);
    const execution = spans.find((s) => s.name === "execution research")!;
    const start = spans.find((s) => s.name === "start_task draft")!;
    expect(execution.spanContext().traceId).toBe(TRACE);
    expect(execution.parentSpanContext?.spanId).toBe(KICKOFF_SPAN);
    expect(execution.spanContext().spanId).toBe(executionSpanId(executionObject()));
    expect(start.spanContext().traceId).toBe(TRACE);
    expect(start.parentSpanContext?.spanId).toBe(execution.spanContext().spanId);
    expect(podTraceparent()).toBe(`00-${TRACE}-${start.spanContext().spanId}-01`);
    // The crew's webhook delivery is the execution's child too.
    expect(hooks.map((h) => [h.kind, h.traceparent])).toEqual([
      ["crew", `00-${TRACE}-${execution.spanContext().spanId}-01`],
    ]);

    expect(execution.attributes).toMatchObject({
      "kubecrew.crew": "research",
      "kubecrew.execution": ID,
      "kubecrew.phase": "Succeeded",
      "k8s.namespace.name": NS,
    });
    expect(execution.status.code).not.toBe(SpanStatusCode.ERROR);
    // From the CrewExecution's creation to its completion (the reconcile that saw the task end).
    const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
    expect(ms(execution.startTime)).toBe(Date.parse(CREATED));
    expect(ms(execution.endTime)).toBe(T0 + 4000);
  });

  it("is recorded once however often the finished execution is reconciled, by this controller or a restarted one", async () => {
    given(executionObject());
    await reconciler().reconcile(KEY);
    taskEnded();
    const first = reconciler();
    // A write that loses to another writer records nothing; the key is looked at again.
    kube.failNext("patch", /\/status$/, 409, "Conflict");
    await expect(first.reconcile(KEY)).rejects.toThrow(StaleObjectError);
    await first.reconcile(KEY);
    expect(kube.stored(executionPath)).toMatchObject({ status: { phase: "Succeeded" } });
    const statusWrites = () => kube.log.filter((l) => l === `patch ${executionPath}/status`).length;
    const written = statusWrites();
    await first.reconcile(KEY);
    clock += 60_000; // a restarted controller, after the TTL: it removes the children, and records no span again
    await reconciler().reconcile(KEY);
    await reconciler().reconcile(KEY);

    const spans = await exported();
    expect(spans.filter((s) => s.name.startsWith("execution ")).map((s) => s.name)).toEqual(["execution research"]);
    expect(statusWrites()).toBe(written);
  });

  it("is an error, with the execution's error, when it failed", async () => {
    given(executionObject());
    await reconciler().reconcile(KEY);
    taskEnded({ error: "the model refused" });
    await reconciler().reconcile(KEY);
    const execution = (await exported()).find((s) => s.name === "execution research")!;
    expect(execution.attributes["kubecrew.phase"]).toBe("Failed");
    expect(execution.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: expect.stringContaining("the model refused"),
    });
  });

  it("has an id of its own for each execution, the same in every process", () => {
    expect(executionSpanId(executionObject("exec-uid"))).toBe(executionSpanId(executionObject("exec-uid")));
    expect(executionSpanId(executionObject("exec-uid"))).toMatch(/^[0-9a-f]{16}$/);
    expect(executionSpanId(executionObject("other-uid"))).not.toBe(executionSpanId(executionObject("exec-uid")));
  });

  it("with this controller not tracing, the pod continues the kickoff's trace and no span is made", async () => {
    await tracing?.stop();
    tracing = undefined;
    given(executionObject());
    await reconciler().reconcile(KEY);
    taskEnded();
    await reconciler().reconcile(KEY);
    expect(podTraceparent()).toBe(`00-${TRACE}-${KICKOFF_SPAN}-01`);
    expect(memory.getFinishedSpans()).toEqual([]);
  });

  it("with an unsampled kickoff, records nothing and hands the pod no trace", async () => {
    given(executionObject("exec-uid", "00"));
    await reconciler().reconcile(KEY);
    taskEnded();
    await reconciler().reconcile(KEY);
    expect(podTraceparent()).toBeUndefined();
    expect(await exported()).toEqual([]);
  });
});
