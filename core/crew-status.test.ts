import { describe, expect, it } from "vitest";
import { decodeCrewSpec, desiredCrewStatus } from "./crew-status.ts";

const valid = {
  inputs: [{ name: "topic" }],
  agents: [{ name: "w", role: "{topic} Writer", goal: "g" }],
  tasks: [{ name: "one", description: "About {topic} for {audience}", expectedOutput: "o", agent: "w" }],
};

describe("desiredCrewStatus", () => {
  it("is Ready with the inputs the crew needs and its task count", () => {
    const status = desiredCrewStatus(
      { ...decodeCrewSpec(valid), generation: 3 },
      undefined,
      "2026-01-01T00:00:00.000Z",
    );
    expect(status).toMatchObject({ observedGeneration: 3, taskCount: 1, inputs: ["topic", "audience"] });
    expect(status.conditions).toEqual([
      {
        type: "Ready",
        status: "True",
        reason: "Valid",
        message: "1 tasks, 1 agents",
        observedGeneration: 3,
        lastTransitionTime: "2026-01-01T00:00:00.000Z",
      },
    ]);
  });

  it("is not Ready when a task names a missing agent or two tasks share a name, and says which", () => {
    const spec = { ...valid, tasks: [valid.tasks[0], { ...valid.tasks[0], agent: "ghost" }] };
    const status = desiredCrewStatus({ ...decodeCrewSpec(spec), generation: 1 }, undefined, "2026-01-01T00:00:00.000Z");
    const ready = status.conditions!.find((c) => c.type === "Ready")!;
    expect(ready).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(ready.message).toContain('duplicate task name "one"');
    expect(ready.message).toContain('"ghost"');
    expect(status.taskCount).toBeUndefined();
  });

  it("is not Ready when a task's context or asynchronous run breaks CrewAI's rules, each problem said once", () => {
    const task = (name: string, more: object = {}) => ({
      name,
      description: name,
      expectedOutput: "o",
      agent: "w",
      ...more,
    });
    const spec = {
      ...valid,
      tasks: [
        task("a", { asyncExecution: true, context: ["c"] }),
        task("b", { asyncExecution: true, context: ["a"] }),
        task("c"),
      ],
    };
    const status = desiredCrewStatus({ ...decodeCrewSpec(spec), generation: 1 }, undefined, "2026-01-01T00:00:00.000Z");
    expect(status.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
      message:
        'task "a" takes context from "c", which does not run before it; ' +
        'task "b" is asynchronous and takes context from "a", an asynchronous task that starts with it: make a task between them synchronous, or "b" synchronous',
    });
  });

  it("keeps the transition time while the verdict stays the same", () => {
    const first = desiredCrewStatus({ ...decodeCrewSpec(valid), generation: 1 }, undefined, "2026-01-01T00:00:00.000Z");
    const second = desiredCrewStatus({ ...decodeCrewSpec(valid), generation: 2 }, first, "2026-01-02T00:00:00.000Z");
    expect(second.conditions![0]!.lastTransitionTime).toBe("2026-01-01T00:00:00.000Z");
  });
});
