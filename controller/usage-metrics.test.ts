import { Counter, Registry } from "prom-client";
import { expect, it } from "vitest";
import type { TaskResultSpec } from "../core/task-result.ts";
import { countFinishedExecution } from "./usage-metrics.ts";

const result = (task: string, input: number, output: number, model?: string): TaskResultSpec => ({
  executionRef: { name: "e1" },
  taskName: task,
  taskIndex: 0,
  agent: "Writer",
  attempt: 1,
  executionTime: 1,
  tokenUsage: { inputTokens: input, outputTokens: output, totalTokens: input + output },
  ...(model ? { model } : {}),
});

it("adds an execution's tokens by crew, model and direction", async () => {
  const registry = new Registry();
  const counter = new Counter({
    name: "kubecrew_llm_tokens_total",
    help: "h",
    labelNames: ["crew", "model", "direction"],
    registers: [registry],
  });
  const observed = {
    a: { results: [result("a", 10, 2, "openai/x"), result("a", 5, 1, "openai/x")] },
    b: { results: [result("b", 7, 0, "openai/y")] },
  };
  countFinishedExecution(counter, "research", undefined, observed);
  countFinishedExecution(counter, "research", undefined, { a: { results: [result("a", 1, 1, "openai/x")] } });
  const values = (await counter.get()).values.map((v) => [v.labels.model, v.labels.direction, v.value]);
  expect(values).toEqual([
    ["openai/x", "input", 16],
    ["openai/x", "output", 4],
    ["openai/y", "input", 7],
  ]);
});
