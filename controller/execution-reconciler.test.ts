import http from "node:http";
import type { AddressInfo } from "node:net";
import { beforeEach, describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/runtime/client.ts";
import * as r from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { StaleObjectError } from "../kube/runtime/worker.ts";
import { createCaches, type Caches } from "./caches.ts";
import { ExecutionReconciler, WEBHOOKS_ANNOTATION } from "./execution-reconciler.ts";
import { StartLimit } from "./start-limit.ts";
import { WebhookDispatcher, type WebhookDelivery } from "./webhooks.ts";

const NS = "team-a";
const ID = "0d5c1f5e-6a3b-4c0f-9a43-3f6f1c1e7a10";
const KEY = `${NS}/${ID}`;
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const log = pino({ level: "silent" });
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACED = { [r.ANNOTATION_TRACEPARENT]: `00-${TRACE}-00f067aa0ba902b7-01` };

/** A logger whose lines (parsed) land in `lines`. */
const capturingLog = (lines: Record<string, unknown>[]) =>
  pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });

const executionPath = r.resourcePath(r.CREW_EXECUTIONS, NS, ID);
const crewObject: KubeObject = {
  apiVersion: r.CREWS.apiVersion,
  kind: r.CREWS.kind,
  metadata: { name: "research", namespace: NS, uid: "crew-uid", generation: 1 },
  spec: {
    agents: [{ name: "w", role: "Writer", goal: "Write" }],
    tasks: [
      { name: "draft", agent: "w", description: "Draft", expectedOutput: "A draft" },
      { name: "edit", agent: "w", description: "Edit", expectedOutput: "A text" },
    ],
  },
};
const executionObject = (status?: unknown, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: r.CREW_EXECUTIONS.apiVersion,
  kind: r.CREW_EXECUTIONS.kind,
  metadata: { name: ID, namespace: NS, uid: "exec-uid", generation: 1, ...(annotations ? { annotations } : {}) },
  spec: {
    crewRef: { name: "research" },
    inputs: {},
    webhooks: { task: "http://hooks.test/task", crew: "http://hooks.test/crew" },
  },
  ...(status ? { status } : {}),
});

describe("ExecutionReconciler against a recording client", () => {
  let kube: RecordingKube;
  let caches: Caches;
  let events: string[];
  let hooks: WebhookDelivery[];
  let clock: number;
  let reconciler: ExecutionReconciler;

  beforeEach(() => {
    kube = new RecordingKube();
    caches = createCaches({ client: kube, log, namespace: NS, watchTimeoutSeconds: 60 });
    events = [];
    hooks = [];
    clock = T0;
    reconciler = reconcilerWith(60);
  });

  function reconcilerWith(finishedTtlSeconds: number, startLimit?: StartLimit): ExecutionReconciler {
    return new ExecutionReconciler({
      ...(startLimit ? { startLimit } : {}),
      client: kube,
      caches,
      jobSettings: { defaultImage: "kubecrew:test", defaultServiceAccount: "runner", runnerCommand: ["kubecrew"] },
      finishedTtlSeconds,
      now: () => new Date(clock),
      log,
      events: { record: (_target, type, reason) => events.push(`${type} ${reason}`) },
      webhooks: {
        enqueue: (delivery) => {
          hooks.push(delivery);
          return true;
        },
      },
    });
  }

  /** Objects in the apiserver and in the caches, as the informers would hold them after a sync. */
  function given(execution: KubeObject, more: { crew?: boolean } = {}): void {
    caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), execution));
    if (more.crew !== false) caches.crews.upsert(kube.seed(r.resourcePath(r.CREWS, NS), crewObject));
  }

  /** The first task's runner reported its output and its Job completed. */
  function firstTaskDone(): void {
    const labels = { [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: "draft" };
    const job = kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`))!;
    caches.jobs.upsert({
      ...job,
      status: { startTime: new Date(T0).toISOString(), conditions: [{ type: "Complete", status: "True" }] },
    });
    caches.results.upsert({
      apiVersion: r.CREW_TASK_RESULTS.apiVersion,
      kind: r.CREW_TASK_RESULTS.kind,
      metadata: { name: `${ID}-0`, namespace: NS, labels, creationTimestamp: new Date(T0).toISOString() },
      spec: {
        executionRef: { name: ID },
        taskName: "draft",
        taskIndex: 0,
        agent: "Writer",
        output: "the draft",
        attempt: 1,
        executionTime: 4,
      },
    });
  }

  it("starts the first task: its ConfigMap, then its Job, then the status; events after the status", async () => {
    given(executionObject());
    const result = await reconciler.reconcile(KEY);
    expect(kube.log).toEqual([
      `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
      `create ${r.resourcePath(r.JOBS, NS)}`,
      `patch ${executionPath}/status`,
    ]);
    expect(kube.writes[1]!.body).toMatchObject({ metadata: { name: `${ID}-0` } });
    expect(kube.writes[2]!.body).toMatchObject({
      status: { phase: "Running", currentTask: "draft", progressText: "0/2" },
    });
    expect(events).toEqual(["Normal TaskStarted"]);
    expect(result).toMatchObject({ phase: "Running" });
    expect(result.requeueAfterMs).toBeGreaterThan(0);
  });

  /** A reconciler whose log lines land in `lines`, its webhooks delivered by `webhooks`. */
  function capturingReconciler(lines: Record<string, unknown>[], webhooks: Pick<WebhookDispatcher, "enqueue">) {
    return new ExecutionReconciler({
      client: kube,
      caches,
      jobSettings: { defaultImage: "kubecrew:test", defaultServiceAccount: "runner", runnerCommand: ["kubecrew"] },
      finishedTtlSeconds: 60,
      now: () => new Date(clock),
      log: capturingLog(lines),
      events: { record: () => {} },
      webhooks,
    });
  }

  it("names the kickoff's trace in its log lines of an execution that has one (trace_id), and none otherwise", async () => {
    const lines: Record<string, unknown>[] = [];
    const traced = capturingReconciler(lines, { enqueue: () => true });
    given(executionObject(undefined, TRACED));
    await traced.reconcile(KEY);
    const created = lines.filter((l) => l.msg === "Task Job created");
    expect(created).toEqual([expect.objectContaining({ execution: ID, task: "draft", trace_id: TRACE })]);

    lines.length = 0;
    const other = "1e0b2c4d-6a3b-4c0f-9a43-3f6f1c1e7a11";
    given({ ...executionObject(), metadata: { ...executionObject().metadata, name: other, uid: "other-uid" } });
    await traced.reconcile(`${NS}/${other}`);
    const untraced = lines.filter((l) => l.msg === "Task Job created");
    expect(untraced).toHaveLength(1);
    expect(untraced[0]).not.toHaveProperty("trace_id");
  });

  it("names the trace in the lines of the execution's webhook deliveries", async () => {
    const server = http.createServer((req, res) => req.resume().on("end", () => res.writeHead(200).end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/task`;
    const lines: Record<string, unknown>[] = [];
    const dispatcher = new WebhookDispatcher({
      log: capturingLog(lines),
      secretFor: async () => "s3cret",
      onFinished: () => undefined,
    });
    try {
      const execution = executionObject(undefined, TRACED);
      given({ ...execution, spec: { ...(execution.spec as object), webhooks: { task: url } } });
      const traced = capturingReconciler(lines, dispatcher);
      await traced.reconcile(KEY);
      firstTaskDone();
      clock += 5000;
      await traced.reconcile(KEY);
      await dispatcher.idle();
      expect(lines.filter((l) => l.msg === "Webhook delivered")).toEqual([
        expect.objectContaining({ execution: ID, hook: "task:draft", trace_id: TRACE }),
      ]);
    } finally {
      dispatcher.stop();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("writes nothing when nothing changed since its last reconcile", async () => {
    given(executionObject());
    await reconciler.reconcile(KEY);
    const before = kube.writes.length;
    clock += 1000;
    await reconciler.reconcile(KEY);
    expect(kube.writes.slice(before)).toEqual([]);
    expect(events).toEqual(["Normal TaskStarted"]);
  });

  it("reads a crew the cache does not show yet through from the apiserver", async () => {
    kube.seed(r.resourcePath(r.CREWS, NS), crewObject);
    given(executionObject(), { crew: false });
    await reconciler.reconcile(KEY);
    expect(caches.crews.get(NS, "research")).toBeDefined();
    expect(kube.log).toContain(`create ${r.resourcePath(r.JOBS, NS)}`);
  });

  it("fails a stale status write with StaleObjectError and writes nothing after it", async () => {
    given(executionObject());
    // Another writer changed the execution since the cache saw it.
    await kube.mergePatch(executionPath, { metadata: { annotations: { touched: "yes" } } });
    await expect(reconciler.reconcile(KEY)).rejects.toThrow(StaleObjectError);
    expect(kube.log.at(-1)).toBe(`patch ${executionPath}/status`);
    expect(events).toEqual([]);
  });

  it("asks for each webhook under one key, and not again once it is recorded as delivered", async () => {
    given(executionObject());
    await reconciler.reconcile(KEY);
    firstTaskDone();
    clock += 5000;
    await reconciler.reconcile(KEY);
    expect(hooks.map((h) => [h.hook, h.kind, h.payload.task_id])).toEqual([["task:draft", "task", "draft"]]);

    // A restarted controller (a new reconciler, no deliveries in flight) sees the same status.
    const restarted = reconcilerWith(60);
    await restarted.reconcile(KEY);
    expect(hooks.map((h) => h.hook)).toEqual(["task:draft", "task:draft"]);

    await restarted.recordDelivery(hooks[0]!, "delivered");
    expect(kube.log.at(-1)).toBe(`patch ${executionPath}`);
    expect(caches.executions.get(NS, ID)?.metadata?.annotations?.[WEBHOOKS_ANNOTATION]).toBe(
      JSON.stringify({ "task:draft": "delivered" }),
    );
    await reconcilerWith(60).reconcile(KEY);
    expect(hooks).toHaveLength(2);
  });

  describe("with a limit of 1 task starting at once", () => {
    let woken: string[];
    let limit: StartLimit;
    /** Another execution's task whose Job was just created: it holds the one slot until its pod runs. */
    const otherJob = (status?: { ready: number }) => ({
      metadata: {
        name: "other-0",
        namespace: NS,
        resourceVersion: String(status ? 2 : 1),
        labels: { [r.LABEL_EXECUTION]: "other", [r.LABEL_TASK]: "draft", [r.LABEL_TASK_INDEX]: "0" },
      },
      ...(status ? { status } : {}),
    });

    beforeEach(() => {
      woken = [];
      limit = new StartLimit({ max: 1, wake: (key) => woken.push(key) });
      limit.watch(caches);
      reconciler = reconcilerWith(60, limit);
    });

    it("leaves a new execution Pending, writing nothing, until the slot frees; then starts it", async () => {
      caches.jobs.upsert(otherJob());
      given(executionObject());
      const waiting = await reconciler.reconcile(KEY);
      expect(kube.writes).toEqual([]);
      expect(events).toEqual([]);
      expect(waiting).toEqual({});

      caches.jobs.upsert(otherJob({ ready: 1 }));
      expect(woken).toEqual([KEY]);
      await reconciler.reconcile(KEY);
      expect(kube.log).toEqual([
        `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
        `create ${r.resourcePath(r.JOBS, NS)}`,
        `patch ${executionPath}/status`,
      ]);
      expect(events).toEqual(["Normal TaskStarted"]);
    });

    it("counts a task whose Job a previous controller created and the Job cache does not show yet", async () => {
      // The controller before this one created the first task's Job and was killed before writing the status; this
      // one's Job cache has not seen the Job yet (a stale cache after a restart): the create answers AlreadyExists.
      given(executionObject());
      kube.seed(r.resourcePath(r.JOBS, NS), {
        apiVersion: r.JOBS.apiVersion,
        kind: r.JOBS.kind,
        metadata: { name: `${ID}-0`, namespace: NS, labels: { [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: "draft" } },
      });
      await reconciler.reconcile(KEY);
      expect(kube.log).toContain(`create ${r.resourcePath(r.JOBS, NS)}`);
      expect(kube.log).toContain(`patch ${executionPath}/status`);

      // Its task is starting (no pod running yet): it holds the one slot, and the next execution waits.
      expect(limit.startingCount).toBe(1);
      const next = { execution: `${NS}/next`, job: `${NS}/next-0`, running: false, createdAt: "" };
      expect(limit.tryStart(next)).toBe(false);
      expect(limit.waitingCount).toBe(1);
    });

    it("records a running execution's finished task at once, and starts its next task once a slot frees", async () => {
      given(executionObject());
      await reconciler.reconcile(KEY);
      firstTaskDone();
      caches.jobs.upsert(otherJob());
      const before = kube.writes.length;
      clock += 5000;
      await reconciler.reconcile(KEY);
      expect(kube.log.slice(before)).toEqual([`patch ${executionPath}/status`]);
      expect(kube.writes.at(-1)!.body).toMatchObject({
        status: {
          currentTask: "edit",
          progressText: "1/2",
          tasks: [
            { name: "draft", phase: "Succeeded" },
            { name: "edit", phase: "Pending" },
          ],
        },
      });
      expect(events).toEqual(["Normal TaskStarted", "Normal TaskSucceeded"]);
      expect(hooks.map((h) => h.hook)).toEqual(["task:draft"]);

      caches.jobs.upsert(otherJob({ ready: 1 }));
      expect(woken).toEqual([KEY]);
      await reconciler.reconcile(KEY);
      expect(kube.log.slice(before + 1)).toEqual([
        `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
        `create ${r.resourcePath(r.JOBS, NS)}`,
        `patch ${executionPath}/status`,
      ]);
      expect(kube.writes.at(-2)!.body).toMatchObject({ metadata: { name: `${ID}-1` } });
      expect(kube.writes.at(-1)!.body).toMatchObject({
        status: { tasks: [{ phase: "Succeeded" }, { phase: "Running" }] },
      });
      expect(events.at(-1)).toBe("Normal TaskStarted");
    });
  });

  describe("asynchronous tasks side by side", () => {
    /** Two asynchronous tasks and a third joining them. */
    const parallelCrew: KubeObject = {
      ...crewObject,
      spec: {
        agents: [{ name: "w", role: "Writer", goal: "Write" }],
        tasks: [
          { name: "facts", agent: "w", description: "F", expectedOutput: "F", asyncExecution: true },
          { name: "quotes", agent: "w", description: "Q", expectedOutput: "Q", asyncExecution: true },
          { name: "draft", agent: "w", description: "D", expectedOutput: "D", context: ["facts", "quotes"] },
        ],
      },
    };
    const jobsCreated = () =>
      kube.writes.filter((w) => w.verb === "create" && w.path === r.resourcePath(r.JOBS, NS)).map((w) => w.body);

    beforeEach(() => {
      caches.executions.upsert(kube.seed(r.resourcePath(r.CREW_EXECUTIONS, NS), executionObject()));
      caches.crews.upsert(kube.seed(r.resourcePath(r.CREWS, NS), parallelCrew));
    });

    it("creates both tasks' ConfigMaps and Jobs in one reconcile, then one status recording both", async () => {
      await reconciler.reconcile(KEY);
      expect(kube.log).toEqual([
        `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
        `create ${r.resourcePath(r.JOBS, NS)}`,
        `create ${r.resourcePath(r.CONFIG_MAPS, NS)}`,
        `create ${r.resourcePath(r.JOBS, NS)}`,
        `patch ${executionPath}/status`,
      ]);
      expect(jobsCreated()).toMatchObject([{ metadata: { name: `${ID}-0` } }, { metadata: { name: `${ID}-1` } }]);
      expect(kube.writes.at(-1)!.body).toMatchObject({
        status: { currentTask: "facts", tasks: [{ phase: "Running" }, { phase: "Running" }, { phase: "Pending" }] },
      });
      expect(events).toEqual(["Normal TaskStarted", "Normal TaskStarted"]);
    });

    it("creates no Job twice when reconciled again before the caches show them, or after a restart", async () => {
      await reconciler.reconcile(KEY);
      await reconciler.reconcile(KEY);
      await reconcilerWith(60).reconcile(KEY);
      expect(jobsCreated()).toHaveLength(2);
    });

    it("with a limit of 1 task starting at once: starts the first, and the second once the slot frees", async () => {
      const woken: string[] = [];
      const limit = new StartLimit({ max: 1, wake: (key) => woken.push(key) });
      limit.watch(caches);
      const limited = reconcilerWith(60, limit);
      await limited.reconcile(KEY);
      expect(jobsCreated()).toMatchObject([{ metadata: { name: `${ID}-0` } }]);
      expect(kube.writes.at(-1)!.body).toMatchObject({
        status: { tasks: [{ phase: "Running" }, { phase: "Pending" }, { phase: "Pending" }] },
      });
      expect(limit.waitingCount).toBe(1);

      // The first task's pod runs: its start is over and the slot goes to the execution's second task.
      const first = kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`))!;
      const later = String(Number(first.metadata!.resourceVersion) + 100);
      caches.jobs.upsert({ ...first, metadata: { ...first.metadata, resourceVersion: later }, status: { ready: 1 } });
      expect(woken).toEqual([KEY]);
      await limited.reconcile(KEY);
      expect(jobsCreated()).toMatchObject([{ metadata: { name: `${ID}-0` } }, { metadata: { name: `${ID}-1` } }]);
      expect(kube.writes.at(-1)!.body).toMatchObject({
        status: { tasks: [{ phase: "Running" }, { phase: "Running" }, { phase: "Pending" }] },
      });
    });
  });

  describe("a finished execution", () => {
    const finished = { phase: "Succeeded", completionTime: new Date(T0).toISOString() };

    beforeEach(() => {
      given(executionObject({ ...finished, crewSpec: { ...(crewObject.spec as object), runner: {} } }));
      const job = {
        apiVersion: r.JOBS.apiVersion,
        kind: r.JOBS.kind,
        metadata: { name: `${ID}-0`, namespace: NS, labels: { [r.LABEL_EXECUTION]: ID, [r.LABEL_TASK]: "draft" } },
        status: { conditions: [{ type: "Complete", status: "True" }] },
      };
      caches.jobs.upsert(kube.seed(r.resourcePath(r.JOBS, NS), job));
      kube.seed(r.resourcePath(r.CONFIG_MAPS, NS), {
        metadata: { name: `${ID}-0`, labels: { [r.LABEL_EXECUTION]: ID } },
      });
    });

    it("keeps its children until the TTL is over, and asks to look again then", async () => {
      clock = T0 + 20_000;
      const result = await reconciler.reconcile(KEY);
      expect(kube.writes).toEqual([]);
      expect(result.requeueAfterMs).toBe(40_000);
    });

    it("removes its ConfigMaps, then its Jobs, once the TTL is over; then nothing more", async () => {
      clock = T0 + 60_000;
      const result = await reconciler.reconcile(KEY);
      const removals = kube.writes.filter((w) => w.verb === "deletecollection");
      expect(removals).toEqual([
        {
          verb: "deletecollection",
          path: r.resourcePath(r.CONFIG_MAPS, NS),
          body: { labelSelector: `${r.LABEL_EXECUTION}=${ID}` },
        },
        {
          verb: "deletecollection",
          path: r.resourcePath(r.JOBS, NS),
          body: { labelSelector: `${r.LABEL_EXECUTION}=${ID}`, propagationPolicy: "Background" },
        },
      ]);
      expect(result.requeueAfterMs).toBeUndefined();
      const before = kube.writes.length;
      await reconciler.reconcile(KEY);
      expect(kube.writes.slice(before)).toEqual([]);
    });

    it("names the trace in the line saying its children were removed", async () => {
      given(executionObject({ ...finished, crewSpec: { ...(crewObject.spec as object), runner: {} } }, TRACED));
      const lines: Record<string, unknown>[] = [];
      clock = T0 + 60_000;
      await capturingReconciler(lines, { enqueue: () => true }).reconcile(KEY);
      expect(lines.filter((l) => l.msg === "Removed the Jobs and ConfigMaps of a finished execution")).toEqual([
        expect.objectContaining({ execution: ID, trace_id: TRACE }),
      ]);
    });

    it("removes them one by one, by name, without the right to delete collections", async () => {
      clock = T0 + 60_000;
      kube.failNext("deletecollection", /configmaps/, 403, "Forbidden");
      await reconciler.reconcile(KEY);
      expect(kube.stored(r.resourcePath(r.CONFIG_MAPS, NS, `${ID}-0`))).toBeUndefined();
      expect(kube.stored(r.resourcePath(r.JOBS, NS, `${ID}-0`))).toBeUndefined();
      expect(kube.log).toContain(`delete ${r.resourcePath(r.CONFIG_MAPS, NS, `${ID}-0`)}`);
      expect(kube.log).toContain(`delete ${r.resourcePath(r.JOBS, NS, `${ID}-0`)}`);
    });
  });
});
