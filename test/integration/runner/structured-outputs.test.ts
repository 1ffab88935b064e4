import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import type { TaskAssignment } from "../../../core/task-assignment.ts";
import { DEFAULT_RETRY_POLICY } from "../../../runner/retry.ts";
import { runTask } from "../../../runner/run-task.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { answer, responseFormatProblem, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";

// Structured outputs and guardrails through the real AI SDK providers, over HTTP, against the LLM fixture server.
let fixture: LlmFixture;
beforeAll(async () => {
  fixture = await startLlmFixture();
});
afterAll(() => fixture.stop());
beforeEach(() => {
  fixture.requests.length = 0;
});

const retry = { ...DEFAULT_RETRY_POLICY, initialDelayMs: 5, maxDelayMs: 20 };
const { fetch } = createOutboundClient(localPolicy);
const env = {
  OPENAI_API_KEY: "sk-openai-test",
  KUBECREW_OPENAI_COMPATIBLE_API_KEY: "local",
  ANTHROPIC_API_KEY: "sk-ant-test",
};

const ARTICLE = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 3 },
    paragraphs: { type: "integer", minimum: 1 },
  },
  required: ["title", "paragraphs"],
};

function assignment(provider: LlmConfig["provider"], task: Partial<TaskAssignment["task"]>): TaskAssignment {
  const a = testAssignment({ llm: { provider, model: "test-model", baseURL: fixture.baseURL } });
  return { ...a, task: { ...a.task, ...task } };
}

type Message = { role: string; content: string | { type: string; text?: string }[] | null };
const messagesOf = (i: number) => fixture.requests[i]!.body.messages as Message[];
const textOf = (m: Message) =>
  typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");
const lastUser = (i: number) => textOf(messagesOf(i).findLast((m) => m.role === "user")!);

describe("outputJson (openai)", () => {
  it("asks with OpenAI's json_schema response format, sends a failing answer back with the errors, keeps the object", async () => {
    fixture.enqueue(
      answer('{"title": 5}', { inputTokens: 100, outputTokens: 5 }),
      answer('```json\n{"title": "Agents at work", "paragraphs": 3}\n```', { inputTokens: 150, outputTokens: 12 }),
    );
    const outcome = await runTask(assignment("openai", { outputJson: ARTICLE }), { env, retry, fetch });

    expect(outcome.error).toBeUndefined();
    expect(outcome.jsonDict).toEqual({ title: "Agents at work", paragraphs: 3 });
    expect(JSON.parse(outcome.output!)).toEqual(outcome.jsonDict);
    expect(outcome.tokenUsage).toEqual({ inputTokens: 250, outputTokens: 17, totalTokens: 267 });
    expect(fixture.requests).toHaveLength(2);
    for (const r of fixture.requests) {
      // The native structured output, as the Chat Completions API takes it (the fixture refuses what OpenAI refuses).
      expect(r.body.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "write", schema: ARTICLE, strict: false },
      });
    }
    expect(lastUser(0)).toContain(JSON.stringify(ARTICLE));
    // The retry goes on with the conversation: the first answer, then what was wrong with it.
    const second = messagesOf(1);
    expect(second.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(textOf(second[2]!)).toBe('{"title": 5}');
    expect(lastUser(1)).toContain("/title must be string");
    expect(lastUser(1)).toContain("must have required property 'paragraphs'");
    expect(outcome.steps!.map((s) => [s.kind, s.input, s.output, s.error])).toEqual([
      ["llm", undefined, '{"title": 5}', undefined],
      [
        "guardrail",
        "outputJson",
        undefined,
        "the answer must have required property 'paragraphs'; /title must be string",
      ],
      ["llm", undefined, expect.stringContaining("Agents at work"), undefined],
      ["guardrail", "outputJson", "passed", undefined],
    ]);
  });

  it("fails the task with the validation errors when no answer validates within the retries", async () => {
    fixture.enqueue(answer("Sure! Here is the article."), answer('{"title": "Hi"}'), answer('{"title": "Hi"}'));
    const outcome = await runTask(assignment("openai", { outputJson: ARTICLE, guardrailMaxRetries: 2 }), {
      env,
      retry,
      fetch,
    });
    expect(outcome.output).toBeUndefined();
    expect(outcome.jsonDict).toBeUndefined();
    expect(outcome.error).toBe(
      "The answer failed outputJson after 2 retries: the answer must have required property 'paragraphs'; " +
        "/title must NOT have fewer than 3 characters",
    );
    expect(fixture.requests).toHaveLength(3);
    expect(lastUser(1)).toContain("the answer is not JSON");
  });
});

describe("outputJson on the other providers", () => {
  it("retries CrewAI's default 3 times: four answers in all, none JSON, fail the task", async () => {
    const outcome = await runTask(assignment("openai-compatible", { outputJson: ARTICLE }), { env, retry, fetch });
    expect(fixture.requests).toHaveLength(4);
    expect(outcome.error).toMatch(/^The answer failed outputJson after 3 retries: the answer is not JSON/);
  });

  it("openai-compatible: JSON mode, the schema in the instructions, the answer validated here", async () => {
    fixture.enqueue(answer('{"title": "Agents", "paragraphs": 2}'));
    const outcome = await runTask(assignment("openai-compatible", { outputJson: ARTICLE }), { env, retry, fetch });
    expect(outcome.error).toBeUndefined();
    expect(outcome.jsonDict).toEqual({ title: "Agents", paragraphs: 2 });
    expect(fixture.requests[0]!.body.response_format).toEqual({ type: "json_object" });
    expect(lastUser(0)).toContain(JSON.stringify(ARTICLE));
  });

  it("anthropic: the object comes back as the json_dict", async () => {
    fixture.enqueue(answer('{"title": "Agents", "paragraphs": 2}'));
    const outcome = await runTask(assignment("anthropic", { outputJson: ARTICLE }), { env, retry, fetch });
    expect(outcome.error).toBeUndefined();
    expect(outcome.jsonDict).toEqual({ title: "Agents", paragraphs: 2 });
  });
});

describe("an LLM guardrail", () => {
  const RULE = "The article must name at least one source.";

  it("asks the agent's model for a verdict; a failing verdict's feedback goes back to the agent", async () => {
    fixture.enqueue(
      answer("Agents are useful.", { inputTokens: 50, outputTokens: 4 }),
      answer('{"valid": false, "feedback": "It names no source."}', { inputTokens: 30, outputTokens: 8 }),
      answer("Agents are useful (Smith, 2024).", { inputTokens: 80, outputTokens: 6 }),
      answer('{"valid": true, "feedback": ""}', { inputTokens: 31, outputTokens: 6 }),
    );
    const outcome = await runTask(assignment("openai", { guardrail: RULE }), { env, retry, fetch });

    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toBe("Agents are useful (Smith, 2024).");
    expect(outcome.jsonDict).toBeUndefined();
    expect(outcome.tokenUsage.totalTokens).toBe(50 + 4 + 30 + 8 + 80 + 6 + 31 + 6);
    expect(fixture.requests).toHaveLength(4);
    // The check: a call of its own with the rule and the answer, and a strict structured verdict.
    const check = fixture.requests[1]!.body;
    expect(check.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "guardrail_verdict" } });
    expect(lastUser(1)).toContain(RULE);
    expect(lastUser(1)).toContain("Agents are useful.");
    expect(fixture.requests[0]!.body.response_format).toBeUndefined();
    expect(lastUser(2)).toContain("It names no source.");
    expect(textOf(messagesOf(2).at(-2)!)).toBe("Agents are useful.");
    expect(outcome.steps!.filter((s) => s.kind === "guardrail").map((s) => [s.input, s.output, s.error])).toEqual([
      [`llm: ${RULE}`, undefined, "It names no source."],
      [`llm: ${RULE}`, "passed", undefined],
    ]);
    expect(outcome.steps!.map((s) => s.kind)).toEqual(["llm", "llm", "guardrail", "llm", "llm", "guardrail"]);
  });

  it("counts an unreadable verdict as a failed check", async () => {
    fixture.enqueue(
      answer("Draft."),
      answer("Looks fine to me."),
      answer("Draft two."),
      answer('{"valid": true, "feedback": ""}'),
    );
    const outcome = await runTask(assignment("openai", { guardrails: [{ llm: RULE }] }), { env, retry, fetch });
    expect(outcome.output).toBe("Draft two.");
    expect(lastUser(2)).toContain("the rule could not be checked: the answer is not JSON");
  });
});

describe("built-in guardrails", () => {
  it("a maxLength check failing on every answer fails the task after guardrailMaxRetries, naming the reason", async () => {
    const long = "An answer far longer than twenty characters.";
    fixture.enqueue(answer(long), answer(long), answer(long));
    const outcome = await runTask(assignment("openai", { guardrails: [{ maxLength: 20 }], guardrailMaxRetries: 2 }), {
      env,
      retry,
      fetch,
    });
    expect(outcome.error).toBe(
      `The answer failed guardrails[0] (maxLength 20) after 2 retries: the answer has ${long.length} characters, more than 20`,
    );
    expect(fixture.requests).toHaveLength(3);
    expect(lastUser(1)).toContain(`failed a check (maxLength 20): the answer has ${long.length} characters`);
    expect(outcome.steps!.filter((s) => s.kind === "guardrail")).toHaveLength(3);
  });

  it("runs the checks in order and stops at the first that fails; a regex check's failure names the pattern", async () => {
    fixture.enqueue(answer("Short."));
    const outcome = await runTask(
      assignment("openai", { guardrails: [{ maxLength: 100 }, { regex: "^Summary:" }], guardrailMaxRetries: 0 }),
      { env, retry, fetch },
    );
    expect(outcome.error).toBe(
      "The answer failed guardrails[1] (regex ^Summary:) after 0 retries: the answer does not match /^Summary:/",
    );
    expect(outcome.steps!.filter((s) => s.kind === "guardrail").map((s) => [s.input, s.output])).toEqual([
      ["maxLength 100", "passed"],
      ["regex ^Summary:", undefined],
    ]);
    expect(fixture.requests).toHaveLength(1);
  });

  it("a jsonSchema guardrail reads the answer as JSON", async () => {
    fixture.enqueue(answer("[1, 2]"), answer('["a", "b"]'));
    const outcome = await runTask(
      assignment("openai", { guardrails: [{ jsonSchema: { type: "array", items: { type: "string" } } }] }),
      { env, retry, fetch },
    );
    expect(outcome.output).toBe('["a", "b"]');
    expect(lastUser(1)).toContain("/0 must be string");
  });
});

describe("the fixture's response_format checks (what OpenAI refuses)", () => {
  const body = (response_format: unknown, content = "Answer in JSON.") => ({
    messages: [{ role: "user", content }],
    response_format,
  });

  it("refuses strict schemas strict mode cannot take, bad names, and JSON mode without the word json", () => {
    const open = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    expect(
      responseFormatProblem(body({ type: "json_schema", json_schema: { name: "x", schema: open, strict: true } })),
    ).toContain("'additionalProperties' is required to be supplied and to be false");
    const partial = {
      ...open,
      properties: { a: { type: "string" }, b: { type: "string" } },
      additionalProperties: false,
    };
    expect(
      responseFormatProblem(body({ type: "json_schema", json_schema: { name: "x", schema: partial, strict: true } })),
    ).toContain("Missing 'b'");
    expect(responseFormatProblem(body({ type: "json_schema", json_schema: { name: "a b", schema: open } }))).toContain(
      "json_schema.name",
    );
    expect(responseFormatProblem(body({ type: "json_object" }, "Answer please."))).toContain(
      "must contain the word 'json'",
    );
    expect(
      responseFormatProblem(body({ type: "json_schema", json_schema: { name: "x", schema: open } })),
    ).toBeUndefined();
  });
});
