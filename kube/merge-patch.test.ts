import { describe, expect, it } from "vitest";
import { mergePatchDiff } from "./merge-patch.ts";

describe("mergePatchDiff", () => {
  it("is empty when nothing changed, whatever the key order", () => {
    expect(mergePatchDiff({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual({});
  });

  it("sends changed keys, removes dropped ones with null, patches nested objects key by key and replaces arrays", () => {
    const before = {
      phase: "Running",
      currentTask: "one",
      progress: { completedTasks: 0, totalTasks: 2 },
      tasks: [{ name: "one" }],
    };
    const after = {
      phase: "Succeeded",
      progress: { completedTasks: 2, totalTasks: 2 },
      tasks: [{ name: "one", phase: "Succeeded" }],
    };
    expect(mergePatchDiff(before, after)).toEqual({
      phase: "Succeeded",
      currentTask: null,
      progress: { completedTasks: 2 },
      tasks: [{ name: "one", phase: "Succeeded" }],
    });
  });

  it("treats undefined as absent", () => {
    expect(mergePatchDiff({ error: "x" }, { error: undefined })).toEqual({ error: null });
    expect(mergePatchDiff(undefined, { a: undefined, b: 1 })).toEqual({ b: 1 });
  });
});
