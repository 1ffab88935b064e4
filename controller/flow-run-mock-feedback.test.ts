import { beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { decodeFlow, decodeFlowExecution, type CachedFlow, type CachedFlowExecution } from "../kube/flow-objects.ts";
import { methodResultName } from "../kube/flow-names.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, FLOW_EXECUTIONS, FLOWS, resourcePath } from "../kube/resources.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { byExecution, executionForCache, resultForCache } from "./caches.ts";
import { FlowRunReconciler } from "./flow-run-reconciler.ts";

// Issue 33 item 4 on a cluster: the mock answers a human_feedback nobody answered, as kubecrew dev's does.
const NS = "team-a";
const RUN = "0c8e4f1a-2b3d-4e5f-8a9b-1c2d3e4f5a6b";
const runPath = resourcePath(FLOW_EXECUTIONS, NS, RUN);
const results = resourcePath(CREW_TASK_RESULTS, NS);
const T0 = Date.parse("2026-11-27T03:00:00.000Z");

const document = {
  schema: "crewai.flow/v1",
  name: "SignOff",
  methods: {
    draft: {
      start: true,
      human_feedback: { message: "Ship it?", emit: ["approved", "rejected"], default_outcome: "rejected" },
      do: { call: "expression", expr: "'the draft'" },
    },
    publish: { listen: "approved", do: { call: "expression", expr: "'published: ' + outputs.draft.feedback" } },
    discard: { listen: "rejected", do: { call: "expression", expr: "'discarded: ' + outputs.draft.feedback" } },
  },
};

describe("a human_feedback on the mock, on a cluster", () => {
  let kube: RecordingKube;
  let flows: Informer<CachedFlow | Undecodable>;
  let runs: Informer<CachedFlowExecution | Undecodable>;
  let clock: number;
  let reconciler: FlowRunReconciler;

  const seedFlow = (llm: object) =>
    flows.upsert(
      kube.seed(resourcePath(FLOWS, NS), {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "Flow",
        metadata: { name: "sign-off", namespace: NS, annotations: { "kubecrew.io/llm": JSON.stringify(llm) } },
        spec: document,
      }),
    );

  beforeEach(() => {
    kube = new RecordingKube();
    const log = silentLogger();
    flows = new Informer({ client: kube, log, path: resourcePath(FLOWS, NS), transform: decodeFlow });
    runs = new Informer({ client: kube, log, path: resourcePath(FLOW_EXECUTIONS, NS), transform: decodeFlowExecution });
    const resultCache = new Informer<CachedTaskResult | Undecodable>({
      client: kube,
      log,
      path: results,
      transform: (r) => resultForCache(r),
      indexKeys: byExecution,
    });
    const executions = new Informer<CachedExecution | Undecodable>({
      client: kube,
      log,
      path: resourcePath(CREW_EXECUTIONS, NS),
      transform: executionForCache(new CrewSpecSnapshots()),
    });
    clock = T0;
    reconciler = new FlowRunReconciler({
      client: kube,
      flows,
      runs,
      executions,
      results: resultCache,
      eachConcurrency: 2,
      now: () => new Date(clock),
      log,
      mockFeedbackAfterMs: 30_000,
    });
    runs.upsert(
      kube.seed(resourcePath(FLOW_EXECUTIONS, NS), {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "FlowExecution",
        metadata: { name: RUN, namespace: NS, uid: "run-uid" },
        spec: { flowRef: { name: "sign-off" }, inputs: {} },
      } as KubeObject),
    );
  });

  const reconcile = () => reconciler.reconcile(`${NS}/${RUN}`);
  const run = () => kube.stored(runPath) as { status: Record<string, unknown> };

  it("waits the given time, then takes the first outcome with empty feedback, and the run goes on", async () => {
    seedFlow({ provider: "mock", model: "m" });
    // The wait begins: the run is looked at again when the mock's answer is due, not a minute later.
    expect(await reconcile()).toEqual({ requeueAfterMs: 30_000 });
    expect(run().status).toMatchObject({
      phase: "WaitingForInput",
      waiting: { method: "draft", emit: ["approved", "rejected"] },
      conditions: [{ type: "WaitingForInput", status: "True", lastTransitionTime: new Date(T0).toISOString() }],
    });

    clock = T0 + 12_000;
    const writes = kube.writes.length;
    expect(await reconcile()).toEqual({ requeueAfterMs: 18_000 });
    expect(kube.writes).toHaveLength(writes);

    clock = T0 + 30_000;
    await reconcile();
    expect(kube.stored(`${results}/${methodResultName(RUN, "draft#1")}`)).toMatchObject({
      spec: { jsonDict: { output: { output: "the draft", feedback: "", outcome: "approved" }, outcome: "approved" } },
    });
    expect(run().status).toMatchObject({
      phase: "Succeeded",
      conditions: [{ type: "WaitingForInput", status: "False", reason: "Answered" }],
    });
    expect(kube.stored(`${results}/${methodResultName(RUN, "publish#1")}`)).toMatchObject({
      spec: { output: "published: " },
    });
  });

  it("takes a person's answer given before then, chosen from the feedback", async () => {
    seedFlow({ provider: "mock", model: "m" });
    await reconcile();
    clock = T0 + 5_000;
    runs.upsert(
      await kube.mergePatch<KubeObject>(runPath, {
        spec: { feedback: [{ activation: "draft#1", feedback: "rejected: too long" }] },
      }),
    );
    await reconcile();
    expect(kube.stored(`${results}/${methodResultName(RUN, "discard#1")}`)).toMatchObject({
      spec: { output: "discarded: rejected: too long" },
    });
  });

  it("never answers for a person where the flow's model is not the mock", async () => {
    seedFlow({ provider: "openai-compatible", model: "m", baseURL: "http://127.0.0.1:9/v1" });
    await reconcile();
    clock = T0 + 3_600_000;
    const writes = kube.writes.length;
    expect(await reconcile()).toEqual({ requeueAfterMs: 60_000 });
    expect(kube.writes).toHaveLength(writes);
    expect(run().status).toMatchObject({ phase: "WaitingForInput" });
  });
});
