import { z } from "zod";
import { jsonObject, type JsonObject } from "./json.ts";
import { jsonSchemaProblems } from "./json-schema.ts";

/**
 * A task's structured output and guardrails (CrewAI's `output_json`/`output_pydantic`, `guardrail`, `guardrails`,
 * `guardrail_max_retries`): the fields of a Crew's task, what is wrong with them, and the checks they amount to.
 * The runner (runner/guardrails.ts) carries the checks out after each answer.
 */

/** CrewAI's default number of retries after a failed guardrail. */
export const DEFAULT_GUARDRAIL_MAX_RETRIES = 3;
export const MAX_GUARDRAIL_RETRIES = 10;
export const MAX_GUARDRAILS = 10;
/** The most characters of a rule in words (an LLM guardrail) or of a regular expression. */
export const MAX_RULE_CHARS = 4096;

const CHECK_KINDS = ["llm", "jsonSchema", "maxLength", "regex"] as const;

const llmRule = z.string().min(1).max(MAX_RULE_CHARS);

/** One check of `guardrails[]`: exactly one of its fields says which check it is. */
export const guardrailCheck = z
  .object({
    llm: llmRule.optional().describe("A rule in words that an LLM (the agent's model) checks the answer against"),
    jsonSchema: jsonObject.optional().describe("A JSON Schema the answer, read as JSON, must be valid against"),
    maxLength: z.number().int().min(1).optional().describe("The most characters the answer may have"),
    regex: z
      .string()
      .min(1)
      .max(MAX_RULE_CHARS)
      .optional()
      .describe("A regular expression (JavaScript syntax) found in the answer; anchor it with ^ and $ for the whole"),
  })
  .refine((c) => checkKinds(c).length === 1, {
    message: "a guardrail needs exactly one of llm, jsonSchema, maxLength, regex",
  });
export type GuardrailCheck = z.infer<typeof guardrailCheck>;

function checkKinds(check: Partial<Record<(typeof CHECK_KINDS)[number], unknown>>): string[] {
  return CHECK_KINDS.filter((k) => check[k] !== undefined);
}

/** The fields a Crew's task gains (spread into `task` in crew.ts). */
export const taskGuardrailFields = {
  outputJson: jsonObject
    .optional()
    .describe(
      "A JSON Schema (type object) the answer must meet (CrewAI's output_json): the model is asked for structured output, the answer validated, and the object reported as json_dict",
    ),
  guardrail: llmRule
    .optional()
    .describe("A rule in words that the agent's model checks each answer against (CrewAI's LLM guardrail)"),
  guardrails: z
    .array(guardrailCheck)
    .max(MAX_GUARDRAILS)
    .optional()
    .describe("Checks of each answer, in order: {llm: rule}, {jsonSchema: schema}, {maxLength: n} or {regex: pattern}"),
  guardrailMaxRetries: z
    .number()
    .int()
    .min(0)
    .max(MAX_GUARDRAIL_RETRIES)
    .optional()
    .describe(
      `How many times a failed check sends the answer back to the agent with the reason, before the task fails (default ${DEFAULT_GUARDRAIL_MAX_RETRIES}, as in CrewAI)`,
    ),
};

/** What the task fields above hold, as a task (and its assignment) carries them. */
export interface TaskGuardrails {
  outputJson?: JsonObject;
  guardrail?: string;
  guardrails?: GuardrailCheck[];
  guardrailMaxRetries?: number;
}

/** What is wrong with a task's structured output and guardrails: schemas that are not schemas, bad expressions. */
export function taskGuardrailProblems(taskName: string, fields: TaskGuardrails): string[] {
  const problems: string[] = [];
  const at = (field: string) => `task "${taskName}": ${field}`;
  if (fields.outputJson) {
    const schemaProblems = jsonSchemaProblems(fields.outputJson);
    for (const p of schemaProblems) problems.push(`${at("outputJson")} is not a valid JSON Schema: ${p}`);
    if (schemaProblems.length === 0 && fields.outputJson.type !== "object") {
      problems.push(`${at("outputJson")} must describe an object (type: object), as CrewAI's json_dict is one`);
    }
  }
  for (const [i, check] of (fields.guardrails ?? []).entries()) {
    if (check.jsonSchema) {
      for (const p of jsonSchemaProblems(check.jsonSchema)) {
        problems.push(`${at(`guardrails[${i}].jsonSchema`)} is not a valid JSON Schema: ${p}`);
      }
    }
    if (check.regex !== undefined) {
      try {
        new RegExp(check.regex);
      } catch (err) {
        problems.push(`${at(`guardrails[${i}].regex`)} is not a valid regular expression: ${(err as Error).message}`);
      }
    }
  }
  return problems;
}
