import { describe, expect, it } from "vitest";
import {
  contextConfigMapName,
  projectJobName,
  revisionOf,
  runJobName,
  taskJobName,
  taskLabels,
  taskResultName,
} from "./task-names.ts";

describe("the names of a task's objects", () => {
  it("names children <execution>-<index>, and keeps long names within 63 characters and stable", () => {
    expect(taskJobName("abc", 2)).toBe("abc-2");
    const long = "x".repeat(80);
    expect(taskJobName(long, 3).length).toBeLessThanOrEqual(63);
    expect(taskJobName(long, 3)).toBe(taskJobName(long, 3));
    expect(taskJobName(long, 3)).not.toBe(taskJobName("x".repeat(81), 3));
  });

  it("names a revision's children <execution>-<index>-r<revision>, each revision apart, within 63 characters", () => {
    expect(taskJobName("abc", 2, 0)).toBe("abc-2");
    expect(taskJobName("abc", 2, 1)).toBe("abc-2-r1");
    expect(contextConfigMapName("abc", 2, 0, 3)).toBe("abc-2-r3-c0");
    expect(taskResultName("abc", 2, false, "abc-2-r1-x7k2p", 1)).toEqual({ name: "abc-2-r1" });
    const long = "y".repeat(80);
    const names = [0, 1, 12, 20].map((r) => taskJobName(long, 99, r));
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(63);
    // The first answer's names are those given before revisions existed.
    expect(names[0]).toBe(taskJobName(long, 99));
  });

  it("names a whole project's Job <execution>-p, a name no task's Job has, whose pods keep it whole", () => {
    const id = "5f0c7a3e-2b1d-4e8f-9a6c-1d2e3f4a5b6c";
    expect(projectJobName(id)).toBe(`${id}-p`);
    expect(runJobName(id, { task: { index: 0 }, project: { crew: "a.crew:A" } })).toBe(`${id}-p`);
    expect(runJobName(id, { task: { index: 0 } })).toBe(`${id}-0`);
    // Every task Job name ends in a digit, of any execution, long or short, revision or not.
    const executions = [id, "a", "a-p", "p", "x".repeat(80), `${id}-0123456789`];
    for (const execution of executions) {
      for (const [index, revision] of [
        [0, 0],
        [1, 0],
        [12, 3],
      ] as const) {
        expect(taskJobName(execution, index, revision)).toMatch(/[0-9]$/);
      }
      // The Job controller names a pod <Job>-<5 characters> and cuts the Job's name to 58 characters first.
      expect(`${projectJobName(execution)}-`.length).toBeLessThanOrEqual(58);
    }
    // Up to 55 characters an execution's name stays whole in its project's pods' names (the policy matches it whole).
    expect(projectJobName("y".repeat(55))).toBe(`${"y".repeat(55)}-p`);
    expect(projectJobName("y".repeat(56))).not.toContain("y".repeat(56));
    expect(projectJobName("y".repeat(56))).not.toBe(projectJobName("y".repeat(57)));
  });

  it("labels a revision's children with it, and reads it back (0 without the label)", () => {
    const labels = taskLabels({ execution: "abc", crew: "c", name: "write", index: 1, revision: 2 });
    expect(labels["kubecrew.io/task-revision"]).toBe("2");
    expect(revisionOf(labels)).toBe(2);
    expect(revisionOf(taskLabels({ execution: "abc", crew: "c", name: "write", index: 1 }))).toBe(0);
    expect(revisionOf({ "kubecrew.io/task-revision": "nonsense" })).toBe(0);
  });

  it("names a moved context output's ConfigMap after the task's Job", () => {
    expect(contextConfigMapName("abc", 2, 0)).toBe("abc-2-c0");
  });

  it("names a success after the task's Job and a failure after its pod (or generates one from the Job's name)", () => {
    expect(taskResultName("abc", 1, false, "abc-1-x7k2p")).toEqual({ name: "abc-1" });
    expect(taskResultName("abc", 1, true, "abc-1-x7k2p")).toEqual({ name: "abc-1-x7k2p-failed" });
    expect(taskResultName("abc", 1, true, undefined)).toEqual({ generateName: "abc-1-failed-" });
  });

  it("labels every child with its execution, task, index and crew", () => {
    expect(taskLabels({ execution: "abc", crew: "research", name: "write", index: 1 })).toEqual({
      "kubecrew.io/execution": "abc",
      "kubecrew.io/task": "write",
      "kubecrew.io/task-index": "1",
      "kubecrew.io/crew": "research",
      "app.kubernetes.io/managed-by": "kubecrew",
    });
  });
});
