import { expect, it } from "vitest";
import type { ExecutionStatus } from "./execution.ts";
import { withUsage } from "./execution-usage.ts";
import type { TaskResultSpec } from "./task-result.ts";

const result = (task: string, input: number, output: number, extra: Partial<TaskResultSpec> = {}): TaskResultSpec => ({
  executionRef: { name: "e1" },
  taskName: task,
  taskIndex: 0,
  agent: "Writer",
  attempt: 1,
  executionTime: 1,
  tokenUsage: { inputTokens: input, outputTokens: output, totalTokens: input + output },
  model: "openai/m",
  ...extra,
});

const finished: ExecutionStatus = {
  phase: "Succeeded",
  tasks: [
    { name: "a", phase: "Succeeded" },
    { name: "b", phase: "Succeeded" },
    { name: "c", phase: "Succeeded" },
  ],
};

it("records each task's tokens (every attempt) and the execution's, priced when the model has a price", () => {
  const results = {
    a: [result("a", 100, 10, { error: "boom" }), result("a", 200, 20, { attempt: 2 })],
    b: [result("b", 1_000_000, 0)],
    c: [result("c", 0, 0, { tokenUsage: undefined })],
  };
  const status = withUsage(finished, undefined, results, { m: { input: 1, output: 4 } });
  expect(status.usage).toEqual({ inputTokens: 1_000_300, outputTokens: 30, totalTokens: 1_000_330, costUsd: 1.00042 });
  expect(status.tasks).toEqual([
    {
      name: "a",
      phase: "Succeeded",
      usage: { inputTokens: 300, outputTokens: 30, totalTokens: 330, costUsd: 0.00042 },
    },
    {
      name: "b",
      phase: "Succeeded",
      usage: { inputTokens: 1_000_000, outputTokens: 0, totalTokens: 1_000_000, costUsd: 1 },
    },
    { name: "c", phase: "Succeeded" },
  ]);
});

it("gives tokens without a cost when a model has no price, and leaves a status without tokens as it is", () => {
  const status = withUsage(finished, undefined, { a: [result("a", 5, 1)] }, {});
  expect(status.usage).toEqual({ inputTokens: 5, outputTokens: 1, totalTokens: 6 });
  expect(withUsage(finished, undefined, { a: [result("a", 0, 0, { tokenUsage: undefined })] }, {})).toBe(finished);
});
