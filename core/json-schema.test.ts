import { describe, expect, it } from "vitest";
import { compileJsonSchema, jsonSchemaProblems, MAX_REPORTED_ERRORS, MAX_SCHEMA_CHARS } from "./json-schema.ts";

const article = {
  type: "object",
  properties: { title: { type: "string", minLength: 3 }, when: { type: "string", format: "date-time" } },
  required: ["title"],
  additionalProperties: false,
};

function validate(schema: Record<string, never> | object, value: unknown): string[] {
  const compiled = compileJsonSchema(schema as never);
  if (compiled.problems) throw new Error(compiled.problems.join("; "));
  return compiled.validate(value);
}

describe("compileJsonSchema", () => {
  it("validates values, each error in words with where it is", () => {
    expect(validate(article, { title: "Agents" })).toEqual([]);
    expect(validate(article, { title: "AI", extra: 1, when: "yesterday" })).toEqual([
      'the answer must NOT have additional properties ("extra")',
      "/title must NOT have fewer than 3 characters",
      '/when must match format "date-time"',
    ]);
    expect(validate({ enum: ["a", "b"] }, "c")).toEqual([
      'the answer must be equal to one of the allowed values (["a","b"])',
    ]);
  });

  it("follows $defs references as pydantic writes nested models (2020-12), and draft-07 definitions", () => {
    const pydantic = {
      $defs: { Source: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } },
      type: "object",
      properties: { sources: { type: "array", items: { $ref: "#/$defs/Source" } } },
      required: ["sources"],
    };
    expect(validate(pydantic, { sources: [{ url: "u" }, {}] })).toEqual([
      "/sources/1 must have required property 'url'",
    ]);
    const draft7 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { n: { type: "integer" } },
      properties: { n: { $ref: "#/definitions/n" } },
    };
    expect(validate(draft7, { n: 1.5 })).toEqual(["/n must be integer"]);
  });

  it("reports at most MAX_REPORTED_ERRORS errors and how many more there were", () => {
    const many = { type: "object", required: Array.from({ length: 15 }, (_, i) => `p${i}`) };
    const errors = validate(many, {});
    expect(errors).toHaveLength(MAX_REPORTED_ERRORS + 1);
    expect(errors.at(-1)).toBe("and 5 more");
  });

  it("compiles a schema with an $id more than once (each compile is its own)", () => {
    expect(jsonSchemaProblems({ $id: "https://example.com/a", type: "object" })).toEqual([]);
    expect(jsonSchemaProblems({ $id: "https://example.com/a", type: "object" })).toEqual([]);
  });

  it("ignores keywords and formats it does not know, as JSON Schema says", () => {
    expect(jsonSchemaProblems({ type: "string", nullable: true, format: "binary", "x-ui": 1 })).toEqual([]);
  });
});

describe("jsonSchemaProblems", () => {
  it("refuses what is not a schema: a wrong type name, a $ref that leads nowhere, an unknown dialect, a huge one", () => {
    expect(jsonSchemaProblems({ type: "strin" })[0]).toBe("/type must be equal to one of the allowed values");
    expect(jsonSchemaProblems({ required: "title" })).toEqual(["/required must be array"]);
    expect(jsonSchemaProblems({ $ref: "#/$defs/Missing" })).toEqual([
      "can't resolve reference #/$defs/Missing from id #",
    ]);
    expect(jsonSchemaProblems({ $schema: "http://json-schema.org/draft-03/schema#" })[0]).toContain(
      "names a $schema kubecrew does not support",
    );
    const huge = { type: "object", description: "x".repeat(MAX_SCHEMA_CHARS) };
    expect(jsonSchemaProblems(huge)[0]).toMatch(/characters as JSON, above the limit of 32768/);
  });
});
