import { describe, expect, it } from "vitest";
import { crewSpec } from "../core/crew-resource.ts";
import { crewExecution } from "../core/execution.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { StringPool } from "../kube/runtime/string-pool.ts";
import { isUndecodable } from "../kube/runtime/undecodable.ts";
import { decodeTaskResult } from "../kube/typed-objects.ts";
import { executionForCache, resultForCache, trimJob } from "./caches.ts";
import { jobRunState, observeTasks, type JobObject } from "./observe.ts";
import { jobStarting } from "./start-limit.ts";

/**
 * What the controller's caches keep of each object (controller/caches.ts): less than the apiserver sends, and still
 * everything the reconcilers read — the same run states, observed tasks and parsed executions as the whole objects.
 */

const spec = crewSpec.parse({
  agents: [{ name: "w", role: "Writer", goal: "Write well", backstory: "A writer of long experience." }],
  tasks: [
    { name: "one", description: "Draft {topic}", expectedOutput: "a draft", agent: "w" },
    { name: "two", description: "Polish the draft", expectedOutput: "the text", agent: "w", context: ["one"] },
  ],
});

const managedFields = [
  { manager: "kube-controller-manager", operation: "Update", fieldsType: "FieldsV1", fieldsV1: { "f:status": {} } },
];

/** A Job as the apiserver sends it: pod template, owner, finalizer, managedFields, timestamps on each condition. */
function apiserverJob(task: string, status: Record<string, unknown>, extra: Record<string, unknown> = {}): JobObject {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: `e-${task}`,
      namespace: "crews",
      uid: `uid-${task}`,
      resourceVersion: "1042",
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { "kubecrew.io/execution": "e", "kubecrew.io/task": task, "batch.kubernetes.io/job-name": `e-${task}` },
      annotations: { "batch.kubernetes.io/job-tracking": "" },
      ownerReferences: [{ apiVersion: "kubecrew.io/v1alpha1", kind: "CrewExecution", name: "e", uid: "u" }],
      finalizers: ["batch.kubernetes.io/job-tracking"],
      managedFields,
      ...extra,
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: 600,
      template: {
        spec: { containers: [{ name: "runner", image: "kubecrew:0.1.0", args: ["runner", "--task", task] }] },
      },
    },
    status: { uncountedTerminatedPods: {}, ready: 0, terminating: 0, ...status } as JobObject["status"],
  };
}

const condition = (type: string, reason?: string, message?: string) => ({
  type,
  status: "True",
  lastProbeTime: "2026-01-01T00:01:00Z",
  lastTransitionTime: "2026-01-01T00:01:00Z",
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
});

const jobs = [
  apiserverJob("one", {
    startTime: "2026-01-01T00:00:01Z",
    completionTime: "2026-01-01T00:01:00Z",
    succeeded: 1,
    conditions: [condition("SuccessCriteriaMet", "CompletionsReached"), condition("Complete", "CompletionsReached")],
  }),
  apiserverJob("two", {
    startTime: "2026-01-01T00:01:01Z",
    failed: 1,
    conditions: [
      condition("FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline"),
      condition("Failed", "DeadlineExceeded", "Job was active longer than specified deadline"),
    ],
  }),
  apiserverJob("three", { active: 1, startTime: "2026-01-01T00:02:00Z" }),
  apiserverJob("four", { active: 1 }, { deletionTimestamp: "2026-01-01T00:03:00Z" }),
];

const results: KubeObject[] = [
  {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "CrewTaskResult",
    metadata: {
      name: "e-one-result",
      namespace: "crews",
      uid: "r1",
      resourceVersion: "1050",
      creationTimestamp: "2026-01-01T00:00:59Z",
      labels: { "kubecrew.io/execution": "e", "kubecrew.io/task": "one" },
      ownerReferences: [{ apiVersion: "kubecrew.io/v1alpha1", kind: "CrewExecution", name: "e", uid: "u" }],
      managedFields,
    },
    spec: {
      executionRef: { name: "e" },
      taskName: "one",
      taskIndex: 0,
      agent: "Writer",
      executionTime: 58,
      output: "the draft",
    },
  },
];

/** A CrewExecution as the apiserver sends it, with managedFields and kubectl's last-applied copy. */
const execution = (name: string, snapshot: unknown): KubeObject => ({
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "CrewExecution",
  metadata: {
    name,
    namespace: "crews",
    uid: `uid-${name}`,
    resourceVersion: "7",
    generation: 1,
    creationTimestamp: "2026-01-01T00:00:00Z",
    annotations: {
      "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ spec: { crewRef: { name: "c" } } }),
      "kubecrew.io/webhooks-delivered": "{}",
    },
    managedFields,
  },
  spec: { crewRef: { name: "c" }, inputs: { topic: name } },
  status: { phase: "Running", crewSpec: snapshot, tasks: [{ name: "one", phase: "Running" }] },
});
describe("the controller's caches", () => {
  it("keep of a Job what gives the same run state, without its template, owners or condition timestamps", () => {
    for (const job of jobs) {
      const kept = trimJob(job);
      expect(jobRunState(kept)).toEqual(jobRunState(job));
      expect(kept).not.toHaveProperty("spec");
      expect(kept.metadata).not.toHaveProperty("ownerReferences");
      expect(kept.metadata).not.toHaveProperty("managedFields");
      expect(kept.status?.conditions?.[0] ?? {}).not.toHaveProperty("lastTransitionTime");
      expect(JSON.stringify(kept).length).toBeLessThan(JSON.stringify(job).length / 2);
    }
    expect(trimJob(jobs[3]!).metadata?.deletionTimestamp).toBe("2026-01-01T00:03:00Z");
    // The condition that ended it (of a success only the fact; of a failure its reason and message); of the counts of
    // pods only a Ready one (the start limit's signal), none here.
    expect(trimJob(jobs[0]!)).toEqual({
      metadata: {
        name: "e-one",
        namespace: "crews",
        resourceVersion: "1042",
        creationTimestamp: "2026-01-01T00:00:00Z",
        labels: { "kubecrew.io/execution": "e", "kubecrew.io/task": "one" },
      },
      status: {
        startTime: "2026-01-01T00:00:01Z",
        conditions: [{ type: "Complete", status: "True" }],
      },
    });
    expect(trimJob(jobs[1]!).status?.conditions).toEqual([
      {
        type: "Failed",
        status: "True",
        reason: "DeadlineExceeded",
        message: "Job was active longer than specified deadline",
      },
    ]);
  });

  it("keep the same objects with their strings from a pool", () => {
    const pool = new StringPool(4);
    for (const job of jobs) expect(trimJob(job, pool.intern)).toEqual(trimJob(job));
    for (const result of results) expect(resultForCache(result, pool.intern)).toEqual(resultForCache(result));
    const plain = executionForCache(new CrewSpecSnapshots());
    const pooled = executionForCache(new CrewSpecSnapshots(), pool.intern);
    const whole = execution("a", structuredClone(spec));
    expect(pooled(whole)).toEqual(plain(whole));
  });

  it("keep of a Job whether its task is still starting (for the limit on tasks starting at once)", () => {
    const pending = apiserverJob("five", { active: 1, ready: 0, startTime: "2026-01-01T00:04:00Z" });
    const runs = apiserverJob("six", { active: 1, ready: 1, startTime: "2026-01-01T00:04:00Z" });
    for (const job of [...jobs, pending, runs]) expect(jobStarting(trimJob(job))).toBe(jobStarting(job));
    expect([jobStarting(trimJob(pending)), jobStarting(trimJob(runs))]).toEqual([true, false]);
  });

  it("observe the same tasks from trimmed Jobs and results as from the apiserver's objects", () => {
    const trimmed = observeTasks(
      spec,
      jobs.map((j) => trimJob(j)),
      results.map((r) => resultForCache(r)),
    );
    expect(trimmed).toEqual(observeTasks(spec, jobs, results.map(decodeTaskResult)));
    expect(trimmed.one?.results[0]).toMatchObject({ taskName: "one", output: "the draft" });
    expect(resultForCache(results[0]!).metadata).toEqual({
      name: "e-one-result",
      namespace: "crews",
      resourceVersion: "1050",
      creationTimestamp: "2026-01-01T00:00:59Z",
      labels: { "kubecrew.io/execution": "e" },
    });
  });

  it("keep one decoded crew snapshot for every execution of the same crew version, and decode the same executions", () => {
    const transform = executionForCache(new CrewSpecSnapshots());
    // Each object comes from its own JSON.parse of a watch event: equal snapshots, distinct objects.
    const a = transform(execution("a", structuredClone(spec)));
    const b = transform(execution("b", structuredClone(spec)));
    const changed = transform(execution("c", { ...structuredClone(spec), tasks: spec.tasks.slice(0, 1) }));
    const snapshotOf = (o: KubeObject) => (o.status as { crewSpec: unknown }).crewSpec;
    expect(snapshotOf(b)).toBe(snapshotOf(a));
    expect(snapshotOf(changed)).not.toBe(snapshotOf(a));
    expect(a.metadata?.annotations).toEqual({ "kubecrew.io/webhooks-delivered": "{}" });
    expect(a.metadata).not.toHaveProperty("managedFields");

    const whole = crewExecution.parse(execution("a", structuredClone(spec)));
    if (isUndecodable(a)) throw new Error(`not decoded: ${a.undecodable.join("; ")}`);
    expect(a.spec).toEqual(whole.spec);
    expect(a.status).toEqual(whole.status);
  });

  it("keep an execution or result that breaks the schema with its metadata and what is wrong", () => {
    const bad = executionForCache(new CrewSpecSnapshots())({
      ...execution("bad", structuredClone(spec)),
      spec: { crewRef: {} },
    });
    expect(isUndecodable(bad) && bad.undecodable).toEqual([expect.stringMatching(/^spec\.crewRef\.name: /)]);
    expect(bad.metadata).toMatchObject({ name: "bad", namespace: "crews", uid: "uid-bad" });
    expect(bad.metadata).not.toHaveProperty("managedFields");
    const badResult = resultForCache({ ...results[0]!, spec: { taskName: 3 } });
    expect(isUndecodable(badResult) && badResult.metadata.name).toBe("e-one-result");
  });
});
