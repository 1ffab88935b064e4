import { describe, expect, it } from "vitest";
import { decideInvalidExecution } from "./invalid-execution.ts";

const now = new Date("2026-03-01T10:00:05.000Z");

describe("decideInvalidExecution", () => {
  it("fails an unfinished execution naming every problem, InvalidSpec when its spec is wrong", () => {
    const decision = decideInvalidExecution({
      status: { phase: "Running", currentTask: "draft", startTime: "2026-03-01T10:00:00.000Z" },
      problems: ["spec.crewRef.name: Required", "spec.webhooks.task: Invalid URL"],
      generation: 2,
      now,
    })!;
    expect(decision.status).toMatchObject({
      phase: "Failed",
      error: "The CrewExecution is invalid: spec.crewRef.name: Required; spec.webhooks.task: Invalid URL",
      executionTime: 5,
      observedGeneration: 2,
    });
    expect(decision.status).not.toHaveProperty("currentTask");
    expect(decision.event).toEqual({ eventType: "Warning", reason: "InvalidSpec", message: decision.status.error });
  });

  it("says InvalidStatus when only its status is wrong, and writes a status that decodes", () => {
    const decision = decideInvalidExecution({
      status: { phase: "Running", tasks: "not a list" },
      problems: ["status.tasks: Expected array"],
      now,
    })!;
    expect(decision.event.reason).toBe("InvalidStatus");
    expect(decision.status).not.toHaveProperty("tasks");
    expect(decision.status.startTime).toBe(now.toISOString());
  });

  it("decides nothing for a finished execution: it was said once", () => {
    for (const phase of ["Succeeded", "Failed", "Stopped"]) {
      expect(decideInvalidExecution({ status: { phase }, problems: ["spec.x: y"], now })).toBeUndefined();
    }
  });
});
