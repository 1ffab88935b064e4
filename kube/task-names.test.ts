import { describe, expect, it } from "vitest";
import { contextConfigMapName, taskJobName, taskLabels, taskResultName } from "./task-names.ts";

describe("the names of a task's objects", () => {
  it("names children <execution>-<index>, and keeps long names within 63 characters and stable", () => {
    expect(taskJobName("abc", 2)).toBe("abc-2");
    const long = "x".repeat(80);
    expect(taskJobName(long, 3).length).toBeLessThanOrEqual(63);
    expect(taskJobName(long, 3)).toBe(taskJobName(long, 3));
    expect(taskJobName(long, 3)).not.toBe(taskJobName("x".repeat(81), 3));
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
