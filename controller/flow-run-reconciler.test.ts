import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { beforeEach, describe, expect, it } from "vitest";
import { decideFlow, initialFlowState } from "../core/flow/decide-flow.ts";
import { flowDefinition } from "../core/flow/definition.ts";
import { silentLogger } from "../core/logger.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { startTracing } from "../platform/telemetry/tracing.ts";
import { decodeFlow, decodeFlowExecution, type CachedFlow, type CachedFlowExecution } from "../kube/flow-objects.ts";
import { methodExecutionName, methodResultName } from "../kube/flow-names.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, FLOW_EXECUTIONS, FLOWS, resourcePath } from "../kube/resources.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { byExecution, executionForCache, resultForCache } from "./caches.ts";
import { FlowRunReconciler } from "./flow-run-reconciler.ts";
import { flowRunSpanId } from "./flow-run-trace.ts";
import { applyDecision } from "./flow-run-status.ts";

const NS = "team-a";
const RUN = "6f1c9a52-5c1e-4d84-9d8e-0f0e7d3b1a2c";
const results = resourcePath(CREW_TASK_RESULTS, NS);
const executions = resourcePath(CREW_EXECUTIONS, NS);
const runPath = resourcePath(FLOW_EXECUTIONS, NS, RUN);

const document = {
  schema: "crewai.flow/v1",
  name: "Chain",
  methods: {
    first: { start: true, do: { call: "expression", expr: "state.topic + ' one'" } },
    second: { listen: "first", do: { call: "expression", expr: "outputs.first + ', two'" } },
    third: {
      listen: "second",
      do: { call: "agent", with: { role: "Writer", goal: "Write", backstory: "Brief.", input: "${outputs.second}" } },
    },
  },
};

/** A controller's caches and run reconciler over what the apiserver holds (a restarted controller lists it all). */
async function controllerOn(kube: RecordingKube) {
  const log = silentLogger();
  const flows = new Informer<CachedFlow | Undecodable>({
    client: kube,
    log,
    path: resourcePath(FLOWS, NS),
    transform: decodeFlow,
  });
  const runs = new Informer<CachedFlowExecution | Undecodable>({
    client: kube,
    log,
    path: resourcePath(FLOW_EXECUTIONS, NS),
    transform: decodeFlowExecution,
  });
  const resultCache = new Informer<CachedTaskResult | Undecodable>({
    client: kube,
    log,
    path: results,
    transform: (r) => resultForCache(r),
    indexKeys: byExecution,
  });
  const executionCache = new Informer<CachedExecution | Undecodable>({
    client: kube,
    log,
    path: executions,
    transform: executionForCache(new CrewSpecSnapshots()),
  });
  const fill = async (cache: { upsert(o: KubeObject): unknown }, path: string) => {
    for (const o of (await kube.list<KubeObject>(path)).items) cache.upsert(o);
  };
  await fill(flows, resourcePath(FLOWS, NS));
  await fill(runs, resourcePath(FLOW_EXECUTIONS, NS));
  await fill(resultCache, results);
  await fill(executionCache, executions);
  const reconciler = new FlowRunReconciler({
    client: kube,
    flows,
    runs,
    executions: executionCache,
    results: resultCache,
    eachConcurrency: 2,
    now: () => new Date("2026-11-27T03:00:00.000Z"),
    log,
  });
  return { runs, resultCache, reconciler };
}

describe("FlowRunReconciler against a recording client", () => {
  let kube: RecordingKube;
  let runs: Informer<CachedFlowExecution | Undecodable>;
  let resultCache: Informer<CachedTaskResult | Undecodable>;
  let reconciler: FlowRunReconciler;

  beforeEach(async () => {
    kube = new RecordingKube();
    kube.seed(resourcePath(FLOWS, NS), {
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Flow",
      metadata: {
        name: "chain",
        namespace: NS,
        annotations: { "kubecrew.io/llm": '{"provider":"mock","model":"m"}' },
      },
      spec: document,
    });
    ({ runs, resultCache, reconciler } = await controllerOn(kube));
  });

  const seedRun = (status?: unknown) =>
    runs.upsert(
      kube.seed(resourcePath(FLOW_EXECUTIONS, NS), {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "FlowExecution",
        metadata: { name: RUN, namespace: NS, uid: "run-uid" },
        spec: { flowRef: { name: "chain" }, inputs: { topic: "tides" } },
        ...(status ? { status } : {}),
      } as KubeObject),
    );

  it("runs the CEL methods in the controller, one result each, and starts the agent's child execution once", async () => {
    seedRun();
    await reconciler.reconcile(`${NS}/${RUN}`);
    const child = methodExecutionName(RUN, "third#1");
    // A hand-over between methods waits for one write: the next method's child is made beside the result, and the
    // status (the graph past the method) is written once both are there.
    expect(kube.log).toEqual([
      `patch ${runPath}/status`,
      `create ${results}`,
      `patch ${runPath}/status`,
      `create ${results}`,
      `create ${executions}`,
      `patch ${runPath}/status`,
    ]);
    expect(kube.stored(`${results}/${methodResultName(RUN, "second#1")}`)).toMatchObject({
      metadata: { labels: { "kubecrew.io/execution": RUN, "kubecrew.io/task": "second" } },
      spec: { taskName: "second", output: "tides one, two", jsonDict: { output: "tides one, two" } },
    });
    expect(kube.stored(`${executions}/${child}`)).toMatchObject({
      metadata: {
        labels: { "kubecrew.io/flow-execution": RUN },
        ownerReferences: [{ kind: "FlowExecution", name: RUN }],
      },
      spec: { crewRef: { name: "chain-third" }, inputs: { flow_input: "tides one, two" } },
    });
    expect(kube.stored(runPath)).toMatchObject({
      status: { phase: "Running", currentMethod: "third", progressText: "2/3" },
    });
    // Looked at again (a replayed event, a restart): the child is there, nothing is written.
    const writes = kube.writes.length;
    await reconciler.reconcile(`${NS}/${RUN}`);
    expect(kube.writes).toHaveLength(writes);
  });

  it("traces a run the kickoff traced: its child execution under the run's span, recorded once at its end", async () => {
    const memory = new InMemorySpanExporter();
    // The exporter's own shutdown forgets what it holds: keep it for the test to read.
    const exporter = { export: memory.export.bind(memory), shutdown: async () => {} };
    const tracing = startTracing({ env: {}, serviceName: "kubecrew-controller", exporter });
    try {
      const trace = "4bf92f3577b34da6a3ce929d0e0e4736";
      const annotations = { "kubecrew.io/traceparent": `00-${trace}-00f067aa0ba902b7-01` };
      runs.upsert(
        kube.seed(resourcePath(FLOW_EXECUTIONS, NS), {
          apiVersion: "kubecrew.io/v1alpha1",
          kind: "FlowExecution",
          metadata: { name: RUN, namespace: NS, uid: "run-uid", annotations },
          spec: { flowRef: { name: "chain" }, inputs: { topic: "tides" } },
        } as KubeObject),
      );
      await reconciler.reconcile(`${NS}/${RUN}`);
      const runSpan = flowRunSpanId({ metadata: { uid: "run-uid" } });
      expect(kube.stored(`${executions}/${methodExecutionName(RUN, "third#1")}`)).toMatchObject({
        metadata: { annotations: { "kubecrew.io/traceparent": `00-${trace}-${runSpan}-01` } },
      });
      // Stopped while its agent runs: the write of its end records the run's span, a look after it none again.
      const running = kube.stored(runPath) as KubeObject & { spec: Record<string, unknown> };
      runs.upsert(kube.seed(resourcePath(FLOW_EXECUTIONS, NS), { ...running, spec: { ...running.spec, stop: true } }));
      await reconciler.reconcile(`${NS}/${RUN}`);
      await reconciler.reconcile(`${NS}/${RUN}`);
      await tracing.stop();
      const spans = memory.getFinishedSpans();
      expect(spans.map((s) => [s.name, s.attributes["kubecrew.phase"], s.spanContext().spanId])).toEqual([
        ["flow chain", "Stopped", runSpan],
      ]);
      expect(spans[0]!.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    } finally {
      await tracing.stop();
    }
  });

  it("starts a child execution with no trace of its own from an untraced run", async () => {
    seedRun();
    await reconciler.reconcile(`${NS}/${RUN}`);
    const child = kube.stored(`${executions}/${methodExecutionName(RUN, "third#1")}`) as KubeObject;
    expect(child.metadata?.annotations?.["kubecrew.io/traceparent"]).toBeUndefined();
    expect(child.spec).toMatchObject({ crewRef: { name: "chain-third" } });
  });

  it("never carries out again a method run whose result is recorded: the result is its end", async () => {
    // As a controller killed after recording first's result, before telling the graph, leaves it.
    seedRun({
      phase: "Running",
      startTime: "2026-11-27T02:59:00.000Z",
      definition: document,
      graph: {
        calls: { first: 1 },
        seen: {},
        firedOr: [],
        chains: [],
        nextChain: 1,
        running: [{ id: "first#1", method: "first" }],
        completed: [],
        outcomes: [],
      },
      methods: [{ id: "first#1", method: "first", phase: "Running", startTime: "2026-11-27T02:59:00.000Z" }],
    });
    resultCache.upsert(
      kube.seed(results, {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "CrewTaskResult",
        metadata: { name: methodResultName(RUN, "first#1"), namespace: NS, labels: { "kubecrew.io/execution": RUN } },
        spec: {
          executionRef: { name: RUN },
          taskName: "first",
          taskIndex: 1,
          agent: "",
          output: "recorded",
          jsonDict: { output: "recorded" },
          executionTime: 1,
        },
      }),
    );
    await reconciler.reconcile(`${NS}/${RUN}`);
    const created = kube.writes.filter((w) => w.verb === "create").map((w) => (w.body as KubeObject).metadata!.name);
    expect(created).not.toContain(methodResultName(RUN, "first#1"));
    expect(kube.stored(`${results}/${methodResultName(RUN, "second#1")}`)).toMatchObject({
      spec: { output: "recorded, two" },
    });
  });

  describe("a kickoff whose start method runs an agent", () => {
    const agentFirst = {
      schema: "crewai.flow/v1",
      name: "AgentFirst",
      methods: {
        a: {
          start: true,
          do: { call: "agent", with: { role: "Writer", goal: "Write", backstory: "Brief.", input: "${state.topic}" } },
        },
        b: { listen: "a", do: { call: "expression", expr: "outputs.a.raw" } },
      },
    };
    const child = methodExecutionName(RUN, "a#1");
    beforeEach(async () => {
      kube = new RecordingKube();
      kube.seed(resourcePath(FLOWS, NS), {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "Flow",
        metadata: {
          name: "chain",
          namespace: NS,
          annotations: { "kubecrew.io/llm": '{"provider":"mock","model":"m"}' },
        },
        spec: agentFirst,
      });
      ({ runs, resultCache, reconciler } = await controllerOn(kube));
    });

    it("makes the start method's child in the kickoff's look, beside the status: no write waits for another", async () => {
      seedRun();
      await reconciler.reconcile(`${NS}/${RUN}`);
      expect([...kube.log].sort()).toEqual([`create ${executions}`, `patch ${runPath}/status`]);
      expect(kube.stored(`${executions}/${child}`)).toMatchObject({ spec: { inputs: { flow_input: "tides" } } });
      expect(kube.stored(runPath)).toMatchObject({
        status: { phase: "Running", methods: [{ id: "a#1", phase: "Running" }] },
      });
    });

    it("killed after the child was made, before the status: the kickoff again finds that child, makes no second", async () => {
      seedRun();
      kube.failNext("patch", /status$/, 500, "InternalError");
      await expect(reconciler.reconcile(`${NS}/${RUN}`)).rejects.toThrow(/500/);
      const children = async () => (await kube.list<KubeObject>(executions)).items.map((e) => e.metadata!.name);
      // The child did not wait for the status: it is there though the status write failed.
      expect(kube.stored(runPath)).not.toHaveProperty("status");
      expect(await children()).toEqual([child]);
      const restarted = await controllerOn(kube);
      await restarted.reconciler.reconcile(`${NS}/${RUN}`);
      expect(await children()).toEqual([child]);
      expect(kube.stored(runPath)).toMatchObject({
        status: { phase: "Running", methods: [{ id: "a#1", phase: "Running" }] },
      });
    });

    it("a run stopped before its kickoff starts no child", async () => {
      runs.upsert(
        kube.seed(resourcePath(FLOW_EXECUTIONS, NS), {
          apiVersion: "kubecrew.io/v1alpha1",
          kind: "FlowExecution",
          metadata: { name: RUN, namespace: NS, uid: "run-uid" },
          spec: { flowRef: { name: "chain" }, inputs: { topic: "tides" }, stop: true },
        } as KubeObject),
      );
      await reconciler.reconcile(`${NS}/${RUN}`);
      expect((await kube.list<KubeObject>(executions)).items).toEqual([]);
      expect(kube.stored(runPath)).toMatchObject({ status: { phase: "Stopped" } });
    });
  });

  describe("a controller killed inside a hand-over", () => {
    // `a` (CEL) then `b` (an agent: a child execution): b's child is made beside a's result.
    const pair = {
      schema: "crewai.flow/v1",
      name: "Pair",
      methods: {
        a: { start: true, do: { call: "expression", expr: "state.topic + ' one'" } },
        b: {
          listen: "a",
          do: { call: "agent", with: { role: "Writer", goal: "Write", backstory: "Brief.", input: "${outputs.a}" } },
        },
      },
    };
    const child = methodExecutionName(RUN, "b#1");
    /** The run as its kickoff left it: `a` running. */
    const kickedOff = () => {
      const definition = flowDefinition.parse(pair);
      const now = "2026-11-27T02:59:00.000Z";
      const started = { phase: "Running" as const, startTime: now, definition: pair, methods: [] };
      return applyDecision(started, definition, decideFlow(definition, initialFlowState(), { type: "kickoff" }), now);
    };
    const children = async () => (await kube.list<KubeObject>(executions)).items.map((e) => e.metadata!.name);
    const afterRestart = async () => {
      const restarted = await controllerOn(kube);
      await restarted.reconciler.reconcile(`${NS}/${RUN}`);
    };
    const expectOneHandOver = async () => {
      expect(await children()).toEqual([child]);
      expect(kube.stored(`${executions}/${child}`)).toMatchObject({ spec: { inputs: { flow_input: "tides one" } } });
      expect(kube.stored(`${results}/${methodResultName(RUN, "a#1")}`)).toMatchObject({
        spec: { output: "tides one" },
      });
      expect(kube.stored(runPath)).toMatchObject({
        status: {
          currentMethod: "b",
          methods: [
            { id: "a#1", phase: "Succeeded" },
            { id: "b#1", phase: "Running" },
          ],
        },
      });
    };

    it("after b's child was made, before a's result: a's end is found again, b's child is not made twice", async () => {
      seedRun(kickedOff());
      kube.failNext("create", /crewtaskresults$/, 500, "InternalError");
      await expect(reconciler.reconcile(`${NS}/${RUN}`)).rejects.toThrow(/500/);
      expect(await children()).toEqual([child]);
      expect(kube.stored(`${results}/${methodResultName(RUN, "a#1")}`)).toBeUndefined();
      await afterRestart();
      await expectOneHandOver();
    });

    it("after a's result and b's child, before the status: the result is a's end, b's child is the one made", async () => {
      seedRun(kickedOff());
      kube.failNext("patch", /status$/, 500, "InternalError");
      await expect(reconciler.reconcile(`${NS}/${RUN}`)).rejects.toThrow(/500/);
      expect(kube.log).toEqual([`create ${results}`, `create ${executions}`, `patch ${runPath}/status`]);
      await afterRestart();
      await expectOneHandOver();
      // a's result was not made again.
      expect(kube.log.filter((w) => w === `create ${results}`)).toHaveLength(1);
    });
  });
});
