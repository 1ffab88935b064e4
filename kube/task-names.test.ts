import { describe, expect, it } from "vitest";
import { contextConfigMapName, revisionOf, taskJobName, taskLabels, taskResultName } from "./task-names.ts";

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
