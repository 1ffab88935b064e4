import { describe, expect, it } from "vitest";
import { parseEventId } from "./event-cursor.ts";
import type { ExecutionStatus } from "./execution.ts";
import { eventsAfter, executionEventLog, executionEvents } from "./execution-events.ts";
import type { TaskResultSpec } from "./task-result.ts";

const step = (index: number) => ({ index, kind: "llm" as const, startedAt: "2026-01-01T00:00:00Z", durationMs: 1 });
const running = (taskName: string, taskIndex: number, steps: number): TaskResultSpec => ({
  executionRef: { name: "x" },
  taskName,
  taskIndex,
  agent: "Writer",
  attempt: 1,
  executionTime: 1,
  error: "running",
  steps: Array.from({ length: steps }, (_, i) => step(i)),
});
const twoAtOnce = (stepsA: number, stepsB: number): [ExecutionStatus, Record<string, TaskResultSpec[]>] => [
  {
    phase: "Running",
    tasks: [
      { name: "a", phase: "Running", startTime: "t0" },
      { name: "b", phase: "Running", startTime: "t0" },
    ],
  },
  { a: [running("a", 0, stepsA)], b: [running("b", 1, stepsB)] },
];
const names = (events: ReturnType<typeof executionEvents>) =>
  events.map(
    (e) => `${e.event}:${String(e.data.task_id)}:${(e.data.step as { index?: number } | undefined)?.index ?? "-"}`,
  );

describe("event ids", () => {
  it("resume two tasks that run at once where the reader left each, losing and repeating nothing", () => {
    const before = executionEvents("x", ...twoAtOnce(1, 0));
    expect(names(before)).toEqual(["task_started:a:-", "step:a:0", "task_started:b:-"]);
    const last = before.at(-1)!.id;
    expect(last).toBe("2.1~0");

    // Both tasks went on; a position would now point into task a's new step and skip it.
    const log = executionEventLog("x", ...twoAtOnce(2, 1));
    const { events } = eventsAfter(log, parseEventId(last, log.shape));
    expect(names(events)).toEqual(["step:a:1", "step:b:0"]);
    expect(events.map((e) => e.id)).toEqual(["3.1~0", "3.2~0"]);
  });

  it("are positions while tasks run one after another, as before, and a position resumes there", () => {
    const status: ExecutionStatus = {
      phase: "Running",
      tasks: [
        { name: "a", phase: "Succeeded", startTime: "t0" },
        { name: "b", phase: "Running", startTime: "t1" },
      ],
    };
    const results = { a: [{ ...running("a", 0, 1), error: undefined, output: "A" }], b: [running("b", 1, 2)] };
    const events = executionEvents("x", status, results);
    expect(events.map((e) => e.id)).toEqual(["1", "2", "3", "4", "5", "6"]);
    const log = executionEventLog("x", status, results);
    expect(names(eventsAfter(log, parseEventId("4", log.shape)).events)).toEqual(["step:b:0", "step:b:1"]);
  });

  it("start from the beginning for an id that is no id", () => {
    const log = executionEventLog("x", ...twoAtOnce(1, 1));
    for (const raw of ["", "abc", "1.2.3~0", "-1", "1e3"]) {
      expect(eventsAfter(log, parseEventId(raw, log.shape)).events).toHaveLength(4);
    }
  });
});
