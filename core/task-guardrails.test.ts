import { describe, expect, it } from "vitest";
import { crewSpec } from "./crew-resource.ts";

const agents = [{ name: "writer", role: "Writer", goal: "Write" }];
const task = { name: "write", agent: "writer", description: "Write", expectedOutput: "Text" };

/** The messages of a rejected spec, or [] when it is accepted. */
function problems(fields: Record<string, unknown>): string[] {
  const result = crewSpec.safeParse({ agents, tasks: [{ ...task, ...fields }] });
  return result.success ? [] : result.error.issues.map((i) => i.message);
}

describe("a task's outputJson and guardrails", () => {
  it("accepts a schema, a rule, each kind of check and a retry count, and leaves the count to its default", () => {
    const fields = {
      outputJson: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
      guardrail: "The answer names a source.",
      guardrails: [
        { llm: "Polite." },
        { jsonSchema: { type: "object" } },
        { maxLength: 2000 },
        { regex: "^\\{[\\s\\S]*\\}$" },
      ],
      guardrailMaxRetries: 5,
    };
    expect(problems(fields)).toEqual([]);
    const parsed = crewSpec.parse({ agents, tasks: [task] });
    expect(parsed.tasks[0]!.guardrailMaxRetries).toBeUndefined();
  });

  it("refuses an outputJson that is not a JSON Schema, naming the task and what is wrong", () => {
    expect(problems({ outputJson: { type: "object", properties: { n: { type: "numbr" } } } })).toEqual([
      'task "write": outputJson is not a valid JSON Schema: /properties/n/type must be equal to one of the allowed values',
      'task "write": outputJson is not a valid JSON Schema: /properties/n/type must be array',
      'task "write": outputJson is not a valid JSON Schema: /properties/n/type must match a schema in anyOf',
    ]);
    expect(problems({ outputJson: { type: "object", properties: { a: { $ref: "#/$defs/A" } } } })).toEqual([
      `task "write": outputJson is not a valid JSON Schema: can't resolve reference #/$defs/A from id #`,
    ]);
  });

  it("refuses an outputJson that does not describe an object (json_dict is one)", () => {
    expect(problems({ outputJson: { type: "array" } })).toEqual([
      `task "write": outputJson must describe an object (type: object), as CrewAI's json_dict is one`,
    ]);
  });

  it("refuses a check with none or several kinds, a bad regex, a bad jsonSchema, a negative retry count", () => {
    expect(problems({ guardrails: [{}] })).toEqual([
      "a guardrail needs exactly one of llm, jsonSchema, maxLength, regex",
    ]);
    expect(problems({ guardrails: [{ llm: "x", maxLength: 3 }] })).toEqual([
      "a guardrail needs exactly one of llm, jsonSchema, maxLength, regex",
    ]);
    expect(problems({ guardrails: [{ maxLength: 10 }, { regex: "(unclosed" }] })).toEqual([
      'task "write": guardrails[1].regex is not a valid regular expression: Invalid regular expression: /(unclosed/: Unterminated group',
    ]);
    expect(problems({ guardrails: [{ jsonSchema: { minimum: "1" } }] })).toEqual([
      'task "write": guardrails[0].jsonSchema is not a valid JSON Schema: /minimum must be number',
    ]);
    expect(problems({ guardrailMaxRetries: -1 })).toHaveLength(1);
    expect(problems({ guardrail: "" })).toHaveLength(1);
  });
});
