import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { createMockLanguageModel, MOCK_FAILURE_MESSAGE, mockBehaviour } from "./mock-model.ts";

const call = (model: string, options: { task?: string; abortSignal?: AbortSignal } = {}) =>
  generateText({
    model: createMockLanguageModel(model),
    system: "You are Tester.",
    prompt: "Current Task: check the mock\n\nmore text",
    maxRetries: 0,
    abortSignal: options.abortSignal,
    providerOptions: options.task ? { mock: { task: options.task } } : undefined,
  });

describe("mock language model", () => {
  it("answers with a labelled, deterministic text naming the task and a digest of the prompt", async () => {
    const first = await call("mock", { task: "research" });
    const second = await call("mock", { task: "research" });
    expect(first.text).toMatch(/^\[mock llm\] Answer to task "research" \(prompt sha256:[0-9a-f]{12}, \d+ words\)\./);
    expect(first.text).toContain("mock test provider");
    expect(first.text).toContain("Task: check the mock");
    expect(second.text).toBe(first.text);
  });

  it("gives a different digest for a different prompt", async () => {
    const a = await call("mock", { task: "t" });
    const b = await generateText({ model: createMockLanguageModel("mock"), prompt: "something else", maxRetries: 0 });
    expect(a.text.match(/sha256:(\w+)/)![1]).not.toBe(b.text.match(/sha256:(\w+)/)![1]);
  });

  it("counts words as tokens", async () => {
    const result = await call("mock", { task: "t" });
    // "You are Tester." (3) + "Current Task: check the mock more text" (7)
    expect(result.usage.inputTokens).toBe(10);
    expect(result.usage.outputTokens).toBe(result.text.split(/\s+/).length);
    expect(result.usage.totalTokens).toBe(10 + result.usage.outputTokens!);
  });

  it("fails on request with model 'fail'", async () => {
    await expect(call("fail")).rejects.toThrow(MOCK_FAILURE_MESSAGE);
  });

  it("sleeps with model 'sleep-<ms>' and can be aborted", async () => {
    const started = performance.now();
    await call("sleep-200");
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await expect(call("sleep-10000", { abortSignal: AbortSignal.timeout(50) })).rejects.toThrow(/timeout/i);
  });

  it("answers exactly <bytes> bytes with model 'size-<bytes>'", async () => {
    const result = await call("size-204800", { task: "big" });
    expect(Buffer.byteLength(result.text)).toBe(204_800);
    expect(result.text.startsWith('[mock llm] Answer to task "big"')).toBe(true);
    expect((await call("size-5")).text).toBe("[mock");
  });

  it("echoes the prompt with model 'echo'", async () => {
    const result = await call("echo");
    expect(result.text).toBe("You are Tester.\n\nCurrent Task: check the mock\n\nmore text");
  });

  it("combines behaviours joined by '+' and treats other names as labels", () => {
    expect(mockBehaviour("sleep-500+fail")).toEqual({ sleepMs: 500, fail: true, sizeBytes: undefined, echo: false });
    expect(mockBehaviour("gpt-4o-mini")).toEqual({ sleepMs: 0, fail: false, sizeBytes: undefined, echo: false });
  });

  it("streams the same answer", async () => {
    const { streamText } = await import("ai");
    const result = streamText({ model: createMockLanguageModel("mock"), prompt: "hello", maxRetries: 0 });
    expect(await result.text).toMatch(/^\[mock llm\] Answer to an unnamed task/);
    expect((await result.usage).inputTokens).toBe(1);
  });
});
