import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crew } from "./crew-resource.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { executionUsage, llmPricesEnv, taskUsage, tokensByModel } from "./usage.ts";

const result = (task: string, input: number, output: number, extra: Partial<TaskResultSpec> = {}): TaskResultSpec => ({
  executionRef: { name: "e1" },
  taskName: task,
  taskIndex: 0,
  agent: "Writer",
  attempt: 1,
  executionTime: 1,
  tokenUsage: { inputTokens: input, outputTokens: output, totalTokens: input + output },
  ...extra,
});

const spec: CrewSpec = crew.parse({
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "Crew",
  metadata: { name: "c" },
  spec: {
    llm: { provider: "openai", model: "big" },
    agents: [
      { name: "w", role: "Writer", goal: "g" },
      { name: "r", role: "Reader", goal: "g", llm: { provider: "openai", model: "small" } },
    ],
    tasks: [
      { name: "a", agent: "w", description: "d", expectedOutput: "o" },
      { name: "b", agent: "r", description: "d", expectedOutput: "o" },
    ],
  },
}).spec;

describe("usage", () => {
  it("sums every attempt of a task (a failed attempt's tokens were spent too)", () => {
    const results = [result("a", 100, 10, { error: "boom" }), result("a", 200, 20, { attempt: 2 })];
    expect(taskUsage(results, "big")).toEqual({ input_tokens: 300, output_tokens: 30, total_tokens: 330 });
  });

  it("prices the tokens per million by each result's model, or its agent's", () => {
    const prices = { big: { input: 2, output: 10 }, small: { input: 0.5, output: 1 } };
    const byTask = { a: [result("a", 1_000_000, 100_000)], b: [result("b", 2_000_000, 0)] };
    const models = [
      { name: "a", model: "big" },
      { name: "b", model: "small" },
    ];
    expect(executionUsage(models, byTask, prices)).toEqual({
      input_tokens: 3_000_000,
      output_tokens: 100_000,
      total_tokens: 3_100_000,
      cost_usd: 2 + 1 + 1, // a: 1M in × $2 + 0.1M out × $10; b: 2M in × $0.5
    });
    // A result that names its model is priced as that model.
    expect(taskUsage([result("a", 1_000_000, 0, { model: "small" })], "big", prices)?.cost_usd).toBe(0.5);
  });

  it("gives no cost when a model that used tokens has no price, and no usage without tokens", () => {
    const byTask = { a: [result("a", 10, 1)], b: [result("b", 10, 1)] };
    const usage = executionUsage([{ name: "a", model: "big" }, { name: "b" }], byTask, {
      big: { input: 1, output: 1 },
    });
    expect(usage).toEqual({ input_tokens: 20, output_tokens: 2, total_tokens: 22 });
    expect(executionUsage([{ name: "a" }], { a: [result("a", 0, 0)] })).toBeUndefined();
    expect(taskUsage([{ ...result("a", 0, 0), tokenUsage: undefined }], "big")).toBeUndefined();
  });

  it("sums tokens by model with the crew's default model filled in", () => {
    const byModel = tokensByModel(spec, { a: [result("a", 5, 1), result("a", 7, 2)], b: [result("b", 3, 3)] });
    expect(Object.fromEntries(byModel)).toEqual({ big: { input: 12, output: 3 }, small: { input: 3, output: 3 } });
  });
});

describe("KUBECREW_LLM_PRICES", () => {
  it("reads model → {input, output} US dollars per million tokens; nothing set is no prices", () => {
    expect(llmPricesEnv.parse('{"gpt-x": {"input": 0.15, "output": 0.6}}')).toEqual({
      "gpt-x": { input: 0.15, output: 0.6 },
    });
    expect(llmPricesEnv.parse(undefined)).toEqual({});
  });

  it("refuses what is not JSON or not a price, saying where", () => {
    expect(llmPricesEnv.safeParse("gpt-x=1").error?.issues[0]?.message).toMatch(/must be JSON/);
    expect(llmPricesEnv.safeParse('{"gpt-x": {"input": -1, "output": 1}}').error?.issues[0]?.message).toMatch(
      /^gpt-x\.input: /,
    );
    expect(llmPricesEnv.safeParse('{"gpt-x": {"input": 1, "output": 1, "cached": 1}}').success).toBe(false);
  });
});
