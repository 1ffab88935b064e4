import { generateText, jsonSchema, Output, stepCountIs, tool, type JSONSchema7 } from "ai";
import { describe, expect, it } from "vitest";
import { compileJsonSchema } from "../core/json-schema.ts";
import { VERDICT_SCHEMA } from "./llm-guardrail.ts";
import {
  CALL_TOOLS_QUOTE_CHARS,
  createMockLanguageModel,
  MOCK_FAILURE_MESSAGE,
  MOCK_GUARDRAIL_VERDICT,
  mockBehaviour,
} from "./mock-model.ts";

const call = (model: string, options: { task?: string; abortSignal?: AbortSignal } = {}) =>
  generateText({
    model: createMockLanguageModel(model),
    system: "You are Tester.",
    prompt: "Task: check the mock\n\nmore text",
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
    expect(first.text).toContain(" Task: check the mock");
    expect(first.text).not.toContain("Task: Task:");
    expect(second.text).toBe(first.text);
  });

  it("gives a different digest for a different prompt", async () => {
    const a = await call("mock", { task: "t" });
    const b = await generateText({ model: createMockLanguageModel("mock"), prompt: "something else", maxRetries: 0 });
    expect(a.text.match(/sha256:(\w+)/)![1]).not.toBe(b.text.match(/sha256:(\w+)/)![1]);
  });

  it("counts words as tokens", async () => {
    const result = await call("mock", { task: "t" });
    // "You are Tester." (3) + "Task: check the mock more text" (6)
    expect(result.usage.inputTokens).toBe(9);
    expect(result.usage.outputTokens).toBe(result.text.split(/\s+/).length);
    expect(result.usage.totalTokens).toBe(9 + result.usage.outputTokens!);
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
    expect(result.text).toBe("You are Tester.\n\nTask: check the mock\n\nmore text");
  });

  it("combines behaviours joined by '+' and treats other names as labels", () => {
    const plain = { sleepMs: 0, fail: false, sizeBytes: undefined, echo: false, callTools: false };
    expect(mockBehaviour("sleep-500+fail")).toEqual({ ...plain, sleepMs: 500, fail: true });
    expect(mockBehaviour("call-tools+sleep-5")).toEqual({ ...plain, sleepMs: 5, callTools: true });
    expect(mockBehaviour("gpt-4o-mini")).toEqual(plain);
  });

  it("streams the same answer", async () => {
    const { streamText } = await import("ai");
    const result = streamText({ model: createMockLanguageModel("mock"), prompt: "hello", maxRetries: 0 });
    expect(await result.text).toMatch(/^\[mock llm\] Answer to an unnamed task/);
    expect((await result.usage).inputTokens).toBe(1);
  });

  describe("call-tools", () => {
    const received: Record<string, unknown[]> = {};
    const recording = (name: string, schema: object, output: string) =>
      tool({
        description: name,
        inputSchema: jsonSchema(schema as Parameters<typeof jsonSchema>[0]),
        execute: async (input: unknown) => {
          (received[name] ??= []).push(input);
          return output;
        },
      });

    it("calls every offered tool once with arguments from its schema, then quotes every result", async () => {
      const long = "L".repeat(CALL_TOOLS_QUOTE_CHARS + 100);
      const result = await generateText({
        model: createMockLanguageModel("call-tools"),
        prompt: "Use your tools",
        maxRetries: 0,
        stopWhen: stepCountIs(5),
        tools: {
          search: recording(
            "search",
            {
              type: "object",
              properties: {
                query: { type: "string" },
                limit: { type: "integer", minimum: 3 },
                offset: { type: "number" },
                exact: { type: "boolean" },
                order: { type: "string", enum: ["asc", "desc"] },
                filter: {
                  type: "object",
                  properties: { tag: { type: "string" }, x: { type: "string" } },
                  required: ["tag"],
                },
                optional: { type: "string" },
              },
              required: ["query", "limit", "offset", "exact", "order", "filter"],
            },
            "three results",
          ),
          dump: recording("dump", { type: "object", properties: {} }, long),
        },
      });
      expect(received).toEqual({
        search: [{ query: "x", limit: 3, offset: 0, exact: false, order: "asc", filter: { tag: "x" } }],
        dump: [{}],
      });
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]!.finishReason).toBe("tool-calls");
      expect(result.text).toContain("Tool search returned: three results");
      expect(result.text).toContain(`Tool dump returned: ${"L".repeat(CALL_TOOLS_QUOTE_CHARS)}`);
      expect(result.text).not.toContain("L".repeat(CALL_TOOLS_QUOTE_CHARS + 1));
    });

    it("answers as the plain mock when it is offered no tools", async () => {
      const result = await call("call-tools", { task: "t" });
      expect(result.text).toMatch(/^\[mock llm\] Answer to task "t"/);
    });
  });
});

describe("mock language model, structured output and guardrail checks", () => {
  const pydantic = {
    $defs: {
      Source: {
        type: "object",
        properties: { url: { type: "string", format: "uri" }, title: { type: "string", minLength: 4 } },
        required: ["url", "title"],
      },
    },
    type: "object",
    properties: {
      headline: { type: "string", minLength: 3 },
      score: { type: "integer", minimum: 1 },
      tags: { type: "array", items: { type: "string" }, minItems: 1 },
      source: { $ref: "#/$defs/Source" },
      note: { type: "string" },
    },
    required: ["headline", "score", "tags", "source"],
  };

  it("answers a JSON response format with an object made up from the schema, nested models followed", async () => {
    const result = await generateText({
      model: createMockLanguageModel("mock"),
      prompt: "Task: report",
      output: Output.object({ schema: jsonSchema(pydantic as JSONSchema7) }),
      maxRetries: 0,
    });
    const object = JSON.parse(result.text);
    expect(object).toEqual({
      headline: "xxx",
      score: 1,
      tags: ["x"],
      source: { url: "https://example.com/x", title: "xxxx" },
    });
    const compiled = compileJsonSchema(pydantic);
    if (compiled.problems) throw new Error(compiled.problems.join("; "));
    expect(compiled.validate(object)).toEqual([]);
  });

  it("calls tools first with call-tools, then answers with the object", async () => {
    const result = await generateText({
      model: createMockLanguageModel("call-tools"),
      prompt: "Task: report",
      tools: { ping: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async () => "pong" }) },
      stopWhen: stepCountIs(3),
      output: Output.object({
        schema: jsonSchema({ type: "object", properties: { n: { type: "integer" } }, required: ["n"] }),
      }),
      maxRetries: 0,
    });
    expect(result.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(JSON.parse(result.text)).toEqual({ n: 0 });
  });

  it("passes an answer it is asked to judge (an LLM guardrail)", async () => {
    const result = await generateText({
      model: createMockLanguageModel("mock"),
      prompt: "Rule: x",
      output: Output.object({ schema: jsonSchema(VERDICT_SCHEMA) }),
      providerOptions: { mock: { guardrail: true } },
      maxRetries: 0,
    });
    expect(JSON.parse(result.text)).toEqual(MOCK_GUARDRAIL_VERDICT);
    expect(MOCK_GUARDRAIL_VERDICT.valid).toBe(true);
  });
});
