import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { httpRequestInput } from "./http-request-tool.ts";
import {
  DEFAULT_STRING_MAX_LENGTH,
  fitToTokens,
  grammarSchema,
  MAX_GRAMMAR_ARRAY_ITEMS,
  MAX_GRAMMAR_STRING_LENGTH,
  turnSchema,
} from "./local-grammar.ts";
import { chatHistory, replyContent } from "./local-model.ts";

describe("the local provider's grammars", () => {
  it("keeps the keywords node-llama-cpp knows, bounds strings and arrays, writes every property", () => {
    expect(
      grammarSchema({
        type: "object",
        properties: { city: { type: "string", pattern: "^A" }, tags: { type: "array", items: { type: "string" } } },
        required: ["city"],
        additionalProperties: true,
      }),
    ).toEqual({
      type: "object",
      properties: {
        city: { type: "string", maxLength: DEFAULT_STRING_MAX_LENGTH },
        tags: { type: "array", items: { type: "string", maxLength: DEFAULT_STRING_MAX_LENGTH }, maxItems: 8 },
      },
      required: ["city", "tags"],
      additionalProperties: false,
    });
    expect(grammarSchema({ anyOf: [{ type: "integer" }, { enum: ["a"] }] })).toEqual({
      oneOf: [{ type: "integer" }, { enum: ["a"] }],
    });
  });

  it("offers each tool as {tool, arguments} and the answer beside them, unless a call is required", () => {
    const tools = [{ name: "lookup", inputSchema: { type: "object", properties: { key: { type: "string" } } } }];
    const free = turnSchema(tools, undefined, false) as unknown as { oneOf: { properties: Record<string, unknown> }[] };
    expect(free.oneOf.map((s) => Object.keys(s.properties))).toEqual([["tool", "arguments"], ["answer"]]);
    expect(free.oneOf[0]!.properties.tool).toEqual({ const: "lookup" });
    expect(turnSchema(tools, undefined, true)).toMatchObject({ properties: { tool: { const: "lookup" } } });
  });
});

describe("the local provider's grammars in llama.cpp", () => {
  // What a task's turn hands llama.cpp: it refused every turn that offered a tool ("Failed to parse grammar") while
  // the answer beside the tools was bounded at 2000 characters.
  it("compiles a turn offering http_request and an MCP tool, a structured answer, and schemas with large bounds", async () => {
    const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.fatal, progressLogs: false });
    const tools = [
      { name: "fixture_lookup", inputSchema: z.toJSONSchema(z.object({ key: z.string(), verbose: z.boolean() })) },
      { name: "http_request", inputSchema: z.toJSONSchema(httpRequestInput) },
    ];
    const big = { type: "object", properties: { text: { type: "string", maxLength: 100_000 } }, required: ["text"] };
    const list = { type: "array", items: { type: "integer" }, maxItems: 5000 };
    const schemas = [
      turnSchema(tools, undefined, false),
      turnSchema(tools, big, false),
      turnSchema(tools.slice(1), undefined, true),
      grammarSchema(big),
      grammarSchema(list),
    ];
    for (const schema of schemas) {
      await expect(llama.createGrammarForJsonSchema(schema as Readonly<{ type: "object" }>)).resolves.toBeDefined();
    }
    expect(grammarSchema(list)).toMatchObject({ maxItems: MAX_GRAMMAR_ARRAY_ITEMS });
    expect(grammarSchema(big)).toMatchObject({ properties: { text: { maxLength: MAX_GRAMMAR_STRING_LENGTH } } });
  }, 60_000);
});

describe("the local provider's replies", () => {
  it("reads a tool call, a text answer and a structured answer; a reply cut short stays text", () => {
    expect(replyContent('{"tool": "lookup", "arguments": {"key": "x"}}', true, false)).toMatchObject([
      { type: "tool-call", toolName: "lookup", input: '{"key":"x"}' },
    ]);
    expect(replyContent('{"answer": "Paris"}', true, false)).toEqual([{ type: "text", text: "Paris" }]);
    expect(replyContent('{"answer": {"city": "Paris"}}', true, true)).toEqual([
      { type: "text", text: '{"city":"Paris"}' },
    ]);
    expect(replyContent('{"answer": "Par', true, false)).toEqual([{ type: "text", text: '{"answer": "Par' }]);
    expect(replyContent("plain", false, false)).toEqual([{ type: "text", text: "plain" }]);
  });

  it("gives the model the conversation with its tool calls and results, the tools' instructions in the system text", () => {
    const history = chatHistory(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Look x up." }] },
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "1", toolName: "lookup", input: { key: "x" } }],
        },
        {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId: "1", toolName: "lookup", output: { type: "text", value: "value of x" } },
          ],
        },
      ] as never,
      "TOOLS",
    );
    expect(history).toEqual([
      { type: "system", text: "Be brief.\n\nTOOLS" },
      { type: "user", text: "Look x up." },
      { type: "model", response: ['{"tool":"lookup","arguments":{"key":"x"}}'] },
      { type: "user", text: "Tool lookup returned: value of x" },
      { type: "model", response: [] },
    ]);
  });
});

describe("the local provider's grammars within a reply's tokens", () => {
  // The example briefing crew's facts on 64 tokens: the 135M model wrote its headline until the token limit cut it,
  // every retry alike, and the task failed ("the answer is not JSON").
  const facts = {
    type: "object",
    properties: {
      headline: { type: "string", minLength: 3 },
      facts: {
        type: "array",
        maxItems: 5,
        items: {
          type: "object",
          properties: { statement: { type: "string", minLength: 3 }, source: { type: "string" } },
        },
      },
      count: { type: "integer" },
    },
  };

  it("shares the tokens among every string the reply may hold, so the longest reply fits", () => {
    const fitted = fitToTokens(grammarSchema(facts), 256) as unknown as {
      properties: { headline: { maxLength: number }; facts: { items: { properties: Record<string, object> } } };
    };
    // 11 strings (a headline, five facts of two): (256 − 6 × 11) tokens × 3 characters, shared.
    const each = Math.floor(((256 - 66) * 3) / 11);
    expect(fitted.properties.headline).toMatchObject({ maxLength: each, minLength: 3 });
    expect(fitted.properties.facts.items.properties).toEqual({
      statement: { type: "string", maxLength: each, minLength: 3 },
      source: { type: "string", maxLength: each },
    });
    // Text alone in a reply keeps more: one string.
    const turn = fitToTokens(turnSchema([], undefined, false), 512) as unknown as {
      properties: { answer: { maxLength: number } };
    };
    expect(turn.properties.answer.maxLength).toBe((512 - 6) * 3);
  });

  it("keeps a bound that fits already, a string's minLength, and schemas without strings", () => {
    const small = { type: "object", properties: { code: { type: "string", maxLength: 5 } } };
    expect(fitToTokens(grammarSchema(small), 64)).toEqual(grammarSchema(small));
    const tight = { type: "string", minLength: 300 };
    expect(fitToTokens(grammarSchema(tight), 16)).toMatchObject({ maxLength: 300, minLength: 300 });
    const numbers = { type: "array", items: { type: "integer" } };
    expect(fitToTokens(grammarSchema(numbers), 8)).toEqual(grammarSchema(numbers));
  });
});
