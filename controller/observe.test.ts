import { describe, expect, it } from "vitest";
import { crewSpec } from "../core/crew-resource.ts";
import { decodeTaskResult } from "../kube/typed-objects.ts";
import { jobRunState, observeTasks, type JobObject } from "./observe.ts";

const spec = crewSpec.parse({
  agents: [{ name: "w", role: "Writer", goal: "g" }],
  tasks: [
    { name: "one", description: "d", expectedOutput: "o", agent: "w" },
    { name: "two", description: "d", expectedOutput: "o", agent: "w" },
  ],
});

const job = (task: string, status: JobObject["status"], extra: Partial<JobObject["metadata"]> = {}): JobObject => ({
  metadata: {
    name: `e-${task}`,
    labels: { "kubecrew.io/task": task },
    creationTimestamp: "2026-01-01T00:00:00Z",
    ...extra,
  },
  status,
});

describe("jobRunState", () => {
  it("reads success, failure with its reason, and a running Job", () => {
    expect(jobRunState(job("one", { conditions: [{ type: "Complete", status: "True" }] })).state).toBe("succeeded");
    expect(
      jobRunState(
        job("one", {
          conditions: [{ type: "Failed", status: "True", reason: "DeadlineExceeded", message: "too slow" }],
        }),
      ),
    ).toMatchObject({
      state: "failed",
      reason: "DeadlineExceeded",
      message: "too slow",
    });
    expect(
      jobRunState(
        job("one", { conditions: [{ type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded" }] }),
      ),
    ).toMatchObject({
      state: "failed",
      reason: "BackoffLimitExceeded",
    });
    expect(jobRunState(job("one", { active: 1, startTime: "2026-01-01T00:00:05Z" }))).toEqual({
      state: "running",
      startTime: "2026-01-01T00:00:05Z",
    });
  });

  it("counts a Job being deleted as ended", () => {
    expect(jobRunState(job("one", { active: 1 }, { deletionTimestamp: "2026-01-01T00:01:00Z" })).state).toBe("failed");
  });
});

describe("observeTasks", () => {
  it("groups Jobs and results by task, numbers failed attempts by creation, ignores unknown tasks and results whose name is not their index's", () => {
    const result = (name: string, created: string, body: Record<string, unknown>) =>
      decodeTaskResult({
        metadata: { name, creationTimestamp: created },
        spec: {
          executionRef: { name: "e" },
          taskName: "one",
          taskIndex: 0,
          agent: "Writer",
          executionTime: 1,
          ...body,
        },
      });
    const observed = observeTasks(
      spec,
      [job("one", { active: 1 }), job("stray", { active: 1 })],
      [
        result("b", "2026-01-01T00:00:02Z", { error: "second" }),
        result("a", "2026-01-01T00:00:01Z", { error: "first" }),
        decodeTaskResult({ metadata: { name: "bad" }, spec: { nonsense: true } }),
        // Task one's index under task two's name: a pod of task one claiming task two's success.
        result("forged", "2026-01-01T00:00:03Z", { taskName: "two", taskIndex: 0, output: "done" }),
      ],
    );
    expect(Object.keys(observed)).toEqual(["one"]);
    expect(observed.one!.run?.state).toBe("running");
    expect(observed.one!.results.map((r) => [r.error, r.attempt])).toEqual([
      ["first", 1],
      ["second", 2],
    ]);
  });
});

describe("a humanInput task sent back for a revision", () => {
  it("is seen through its latest revision's Job, whatever order the cache gives them in, attempts numbered per revision", () => {
    const result = (name: string, revision: number, body: Record<string, unknown>) =>
      decodeTaskResult({
        metadata: { name, creationTimestamp: `2026-01-01T00:00:0${name.length}Z` },
        spec: {
          executionRef: { name: "e" },
          taskName: "one",
          taskIndex: 0,
          agent: "Writer",
          executionTime: 1,
          ...(revision ? { revision } : {}),
          ...body,
        },
      });
    const revisionJob = job(
      "one",
      { active: 1 },
      { name: "e-0-r1", labels: { "kubecrew.io/task": "one", "kubecrew.io/task-revision": "1" } },
    );
    const firstJob = job("one", { conditions: [{ type: "Complete", status: "True" }] });
    for (const jobs of [
      [firstJob, revisionJob],
      [revisionJob, firstJob],
    ]) {
      const observed = observeTasks(spec, jobs, [
        result("a", 0, { output: "first" }),
        result("bb", 1, { error: "flaky" }),
      ]);
      expect(observed.one!.run).toMatchObject({ state: "running", revision: 1 });
      expect(observed.one!.results.map((r) => [r.revision ?? 0, r.attempt, r.output ?? r.error])).toEqual([
        [0, 1, "first"],
        [1, 1, "flaky"],
      ]);
    }
  });
});

describe("a task whose runner reported success", () => {
  it("counts as succeeded while its Job still shows the pod running", () => {
    const observed = observeTasks(
      spec,
      [job("one", { active: 1 })],
      [
        decodeTaskResult({
          metadata: { name: "r" },
          spec: {
            executionRef: { name: "e" },
            taskName: "one",
            taskIndex: 0,
            agent: "Writer",
            executionTime: 1,
            output: "done",
          },
        }),
      ],
    );
    expect(observed.one!.run?.state).toBe("succeeded");
  });
});
