import { describe, expect, it } from "vitest";
import { executionEvents } from "./execution-events.ts";
import type { TaskResultSpec } from "./task-result.ts";

const result = (attempt: number, over: Partial<TaskResultSpec>): TaskResultSpec => ({
  executionRef: { name: "x" },
  taskName: "a",
  taskIndex: 0,
  agent: "Writer",
  attempt,
  executionTime: 2,
  ...over,
});
const step = (index: number) => ({ index, kind: "llm" as const, startedAt: "2026-01-01T00:00:00Z", durationMs: 1 });

describe("executionEvents", () => {
  it("lists each started task, its attempts' steps, its end, then the execution's end, numbered from 1", () => {
    const events = executionEvents(
      "x",
      {
        phase: "Failed",
        error: 'Task "b" failed: boom',
        executionTime: 9,
        tasks: [
          { name: "a", phase: "Succeeded", startTime: "t0" },
          { name: "b", phase: "Failed", startTime: "t1", message: "boom" },
          { name: "c", phase: "Pending" },
        ],
      },
      {
        a: [
          result(2, { output: "A", steps: [step(0)], stepCount: 1, toolsUsed: [] }),
          result(1, { error: "first", steps: [step(0)] }),
        ],
        b: [result(1, { taskName: "b", error: "boom" })],
      },
    );
    expect(events.map((e) => [e.id, e.event, e.data.task_id ?? null, e.data.attempt ?? null])).toEqual([
      ["1", "task_started", "a", null],
      ["2", "step", "a", 1],
      ["3", "step", "a", 2],
      ["4", "task_completed", "a", null],
      ["5", "task_started", "b", null],
      ["6", "task_failed", "b", null],
      ["7", "execution_failed", null, null],
    ]);
    expect(events[3]!.data).toMatchObject({ output: "A", agent: "Writer", steps: 1, tools_used: [] });
    expect(events[6]!.data).toEqual({
      kickoff_id: "x",
      status: "error",
      error: 'Task "b" failed: boom',
      execution_time: 9,
    });
  });

  it("has no events before the execution started", () => {
    expect(executionEvents("x", undefined, {})).toEqual([]);
  });

  it("lists a running attempt's steps once when they show on its in-progress result and its final one", () => {
    const events = executionEvents(
      "x",
      { phase: "Running", tasks: [{ name: "a", phase: "Running", startTime: "t0" }] },
      { a: [result(1, { error: "e", steps: [step(0), step(1)] }), result(1, { steps: [step(0)] })] },
    );
    expect(events.map((e) => [e.event, (e.data.step as { index?: number } | undefined)?.index ?? null])).toEqual([
      ["task_started", null],
      ["step", 0],
      ["step", 1],
    ]);
  });
});
