import { describe, expect, it } from "vitest";
import { executionEventBody, knownEventNames } from "./execution-event-bodies.ts";
import { executionEvents } from "./execution-events.ts";
import type { TaskResultSpec } from "./task-result.ts";

const result = (taskName: string, over: Partial<TaskResultSpec>): TaskResultSpec => ({
  executionRef: { name: "x" },
  taskName,
  taskIndex: 0,
  agent: "Writer",
  attempt: 1,
  executionTime: 2,
  ...over,
});

/** What the event stream sends: the event's data with its name (api/routes/event-stream.ts). */
const wire = (events: ReturnType<typeof executionEvents>) => events.map((e) => ({ ...e.data, event: e.event }));

describe("the event stream's bodies", () => {
  it("describe every event a run that succeeded, one that failed, one that waits for a person and one that holds a tool call send", () => {
    const llm = { index: 0, kind: "llm" as const, startedAt: "t", durationMs: 3, output: "hi" };
    const tokenUsage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
    const tool = {
      index: 1,
      kind: "tool" as const,
      tool: "search",
      input: "{}",
      error: "no",
      startedAt: "t",
      durationMs: 1,
    };
    const succeeded = executionEvents(
      "x",
      { phase: "Succeeded", executionTime: 5, tasks: [{ name: "a", phase: "Succeeded", startTime: "t0" }] },
      { a: [result("a", { output: "A", steps: [{ ...llm, tokenUsage }, tool], stepCount: 2, toolsUsed: ["search"] })] },
    );
    const failed = executionEvents(
      "y",
      { phase: "Failed", error: "boom", tasks: [{ name: "b", phase: "Failed", startTime: "t0", message: "boom" }] },
      { b: [result("b", { error: "boom" })] },
    );
    const waiting = executionEvents(
      "z",
      {
        phase: "WaitingForInput",
        tasks: [{ name: "c", phase: "WaitingForInput", startTime: "t0" }],
        inputRequests: [{ kind: "taskOutput", task: "c", revision: 0, requestedAt: "t1" }],
      },
      { c: [result("c", { output: "C" })] },
    );
    const held = executionEvents(
      "h",
      {
        phase: "WaitingForInput",
        tasks: [{ name: "d", phase: "WaitingForInput", startTime: "t0" }],
        inputRequests: [
          {
            kind: "toolCall",
            task: "d",
            revision: 0,
            requestedAt: "t1",
            toolCall: { id: "c1", tool: "gmail/send_email", arguments: { to: "x@example.com" }, actsAs: "alice" },
          },
        ],
      },
      { d: [result("d", { steps: [llm], stepCount: 1 })] },
      [
        {
          kind: "toolCall",
          task: "d",
          revision: 0,
          toolCallId: "c1",
          approve: false,
          feedback: "no",
          decidedBy: { kind: "user", subject: "alice" },
          decidedAt: "t2",
        },
      ],
    );
    expect(held.map((e) => e.event)).toEqual(["task_started", "step", "tool_call_held", "step"]);
    const bodies = [...wire(succeeded), ...wire(failed), ...wire(waiting), ...wire(held)];
    expect(new Set(bodies.map((b) => b.event))).toEqual(new Set(knownEventNames));
    for (const body of bodies) expect(executionEventBody.parse(body)).toEqual(body);
  });
});
