import { Counter, Registry } from "prom-client";
import { expect, it } from "vitest";
import type { TaskResultSpec } from "../core/task-result.ts";
import { countFinishedExecution, type UsageCounters } from "./usage-metrics.ts";

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

function counters(prices: UsageCounters["prices"] = {}) {
  const registry = new Registry();
  const tokens = new Counter({
    name: "kubecrew_llm_tokens_total",
    help: "h",
    labelNames: ["crew", "model", "direction"],
    registers: [registry],
  });
  const cost = new Counter({
    name: "kubecrew_llm_cost_usd_total",
    help: "h",
    labelNames: ["crew", "model"],
    registers: [registry],
  });
  return { tokens, cost, prices };
}

it("adds an execution's tokens by crew, model and direction", async () => {
  const c = counters();
  const observed = {
    a: { results: [result("a", 10, 2, "openai/x"), result("a", 5, 1, "openai/x")] },
    b: { results: [result("b", 7, 0, "openai/y")] },
  };
  countFinishedExecution(c, "research", undefined, observed);
  countFinishedExecution(c, "research", undefined, { a: { results: [result("a", 1, 1, "openai/x")] } });
  const values = (await c.tokens.get()).values.map((v) => [v.labels.model, v.labels.direction, v.value]);
  expect(values).toEqual([
    ["openai/x", "input", 16],
    ["openai/x", "output", 4],
    ["openai/y", "input", 7],
  ]);
  // No price table: no cost series at all.
  expect((await c.cost.get()).values).toEqual([]);
});

it("adds the cost of priced models by crew and model, and none for a model without a price", async () => {
  const c = counters({ x: { input: 2, output: 10 } });
  const observed = {
    a: { results: [result("a", 1_000_000, 100_000, "openai/x"), result("a", 500_000, 0, "openai/x")] },
    b: { results: [result("b", 7, 3, "openai/y")] },
  };
  countFinishedExecution(c, "research", undefined, observed);
  countFinishedExecution(c, "briefing", undefined, { a: { results: [result("a", 250_000, 0, "openai/x")] } });
  const values = (await c.cost.get()).values.map((v) => [v.labels.crew, v.labels.model, v.value]);
  // research: 1.5M input × $2 + 0.1M output × $10 = $4; briefing: 0.25M × $2 = $0.5.
  expect(values).toEqual([
    ["research", "openai/x", 4],
    ["briefing", "openai/x", 0.5],
  ]);
});
