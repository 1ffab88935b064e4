import { describe, expect, it } from "vitest";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { checkAnswer, checksExhausted, retryFeedback, taskChecks, type CheckDeps } from "./guardrails.ts";

const base: TaskAssignment["task"] = { index: 0, name: "t", description: "d", expectedOutput: "e" } as never;
const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };

function deps(verdicts: Record<string, string | undefined> = {}) {
  const judged: string[] = [];
  const checks: [string, boolean, string | undefined][] = [];
  const d: CheckDeps = {
    judge: async (rule, answer) => {
      judged.push(`${rule} | ${answer}`);
      const reason = verdicts[rule];
      return {
        passed: reason === undefined,
        ...(reason !== undefined ? { reason } : {}),
        tokenUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      };
    },
    onCheck: (check, result) => checks.push([check.name, result.passed, result.reason]),
  };
  return { d, judged, checks };
}

describe("taskChecks", () => {
  it("orders the checks outputJson, guardrails[] in order, guardrail; retries default to CrewAI's 3", () => {
    const checks = taskChecks({
      ...base,
      outputJson: schema,
      guardrails: [{ maxLength: 10 }, { regex: "a+" }, { llm: "polite" }, { jsonSchema: { type: "object" } }],
      guardrail: "names a source",
    });
    expect(checks.checks.map((c) => [c.field, c.name])).toEqual([
      ["outputJson", "outputJson"],
      ["guardrails[0]", "maxLength 10"],
      ["guardrails[1]", "regex a+"],
      ["guardrails[2]", "llm: polite"],
      ["guardrails[3]", "jsonSchema"],
      ["guardrail", "llm: names a source"],
    ]);
    expect(checks.maxRetries).toBe(3);
    expect(taskChecks({ ...base, guardrailMaxRetries: 0 }).maxRetries).toBe(0);
    expect(taskChecks(base).checks).toEqual([]);
  });
});

describe("checkAnswer", () => {
  it("takes an answer as it is when the task has no checks", async () => {
    expect(await checkAnswer("  anything ", taskChecks(base), deps().d)).toEqual({
      passed: true,
      output: "  anything ",
    });
  });

  it("reads the object of an outputJson task, and later checks see its JSON text", async () => {
    const { d, judged } = deps();
    const checks = taskChecks({ ...base, outputJson: schema, guardrails: [{ maxLength: 9 }], guardrail: "ok" });
    const verdict = await checkAnswer('Here you go:\n```json\n{"n": 42}\n```', checks, d);
    expect(verdict).toEqual({ passed: true, output: '{"n": 42}', jsonDict: { n: 42 } });
    expect(judged).toEqual(['ok | {"n": 42}']);
  });

  it("stops at the first failing check, with its reason; the checks after it do not run", async () => {
    const { d, judged, checks } = deps({ polite: "It is rude." });
    const verdict = await checkAnswer(
      "hello",
      taskChecks({ ...base, guardrails: [{ regex: "^h" }, { llm: "polite" }, { maxLength: 1 }] }),
      d,
    );
    expect(verdict).toMatchObject({ passed: false, failed: { field: "guardrails[1]" }, reason: "It is rude." });
    expect(judged).toHaveLength(1);
    expect(checks).toEqual([
      ["regex ^h", true, undefined],
      ["llm: polite", false, "It is rude."],
    ]);
  });

  it("says why each built-in check failed", async () => {
    const fail = async (guardrails: NonNullable<TaskAssignment["task"]["guardrails"]>, answer: string) => {
      const v = await checkAnswer(answer, taskChecks({ ...base, guardrails }), deps().d);
      return v.passed ? "passed" : v.reason;
    };
    // Characters, not UTF-16 units or bytes: "é😀" is two.
    expect(await fail([{ maxLength: 2 }], "é😀")).toBe("passed");
    expect(await fail([{ maxLength: 2 }], "abc")).toBe("the answer has 3 characters, more than 2");
    expect(await fail([{ regex: "^\\d+$" }], "12a")).toBe("the answer does not match /^\\d+$/");
    expect(await fail([{ jsonSchema: { type: "array" } }], "{}")).toBe("the answer must be array");
    expect(await fail([{ jsonSchema: { type: "array" } }], "nope")).toMatch(/^the answer is not JSON/);
    expect(await fail([{ jsonSchema: { type: "number" } }], " 7 ")).toBe("passed");
  });

  it("fails an outputJson answer that is not an object, or not JSON", async () => {
    const checks = taskChecks({ ...base, outputJson: schema });
    expect(await checkAnswer("[1]", checks, deps().d)).toMatchObject({ reason: "the answer is not a JSON object" });
    expect(await checkAnswer("no json here", checks, deps().d)).toMatchObject({
      reason: expect.stringMatching(/^the answer is not JSON/),
    });
    expect(await checkAnswer('{"n": "x"}', checks, deps().d)).toMatchObject({ reason: "/n must be integer" });
  });
});

describe("the words after a failed check", () => {
  const [outputJson, maxLength] = taskChecks({ ...base, outputJson: schema, guardrails: [{ maxLength: 5 }] }).checks;

  it("tell the agent which check failed, why, and to answer again in full", () => {
    expect(retryFeedback(outputJson!, "/n must be integer")).toBe(
      "Your answer is not valid against the task's JSON Schema: /n must be integer\n\n" +
        "Reply again with the whole corrected JSON object, and nothing else.",
    );
    expect(retryFeedback(maxLength!, "too long")).toBe(
      "Your answer failed a check (maxLength 5): too long\n\nReply again with the whole corrected answer, in full.",
    );
  });

  it("fail the task naming the check, the retries and the reason", () => {
    expect(checksExhausted(outputJson!, "/n must be integer", 3)).toBe(
      "The answer failed outputJson after 3 retries: /n must be integer",
    );
    expect(checksExhausted(maxLength!, "too long", 1)).toBe(
      "The answer failed guardrails[0] (maxLength 5) after 1 retry: too long",
    );
  });
});
