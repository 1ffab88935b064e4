import { Output } from "ai";
import type { JsonObject } from "../core/json.ts";
import type { CompiledSchema } from "../core/json-schema.ts";

/**
 * Structured output (a task's `outputJson`): how the model is asked for it, and how its answer is read.
 *
 * The model is asked twice over: the task message says to answer with one JSON object valid against the schema (what
 * every model understands), and the call carries the schema as the provider's native structured output (OpenAI's
 * `response_format` `json_schema`, Anthropic's output format; an OpenAI-compatible server gets JSON mode). Either way
 * the answer is validated here: a provider's guarantee is not taken on trust, and an answer that fails goes back to
 * the agent with the errors (runner/guardrails.ts).
 */

/** The AI SDK output of a task with `outputJson`: the schema as the provider's response format, the text as it is. */
export function structuredOutput(schema: JsonObject, name: string): Output.Output<string, string> {
  return {
    ...Output.text(),
    name: "json",
    responseFormat: Promise.resolve({ type: "json", schema: schema as never, name }),
  };
}

/** A response format name as OpenAI accepts it (letters, digits, `_`, `-`; at most 64). */
export function responseFormatName(taskName: string): string {
  return `${taskName.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64) || "answer";
}

/** The sentence of the task message that asks for the object. */
export function structuredOutputInstruction(schema: JsonObject): string {
  return (
    "Answer with a single JSON object and nothing around it (no prose, no code fence). It must be valid against " +
    `this JSON Schema:\n${JSON.stringify(schema)}`
  );
}

export type JsonAnswer = { value: unknown; text: string; error?: undefined } | { error: string };

/** The JSON in a model's answer: its text (a code fence or words around it taken off, as models add them even when
 * told not to) and its value, or why it is not JSON. */
export function readJsonAnswer(answer: string): JsonAnswer {
  const text = jsonText(answer);
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch (err) {
    return { error: `the answer is not JSON (${(err as Error).message})` };
  }
}

export type StructuredAnswer = { object: JsonObject; text: string; errors?: undefined } | { errors: string[] };

/** The object in a model's answer, checked against the schema, or what is wrong with it. */
export function readStructuredAnswer(answer: string, schema: CompiledSchema): StructuredAnswer {
  if (schema.problems) return { errors: schema.problems };
  const json = readJsonAnswer(answer);
  if (json.error !== undefined) return { errors: [json.error] };
  if (json.value === null || typeof json.value !== "object" || Array.isArray(json.value)) {
    return { errors: ["the answer is not a JSON object"] };
  }
  const errors = schema.validate(json.value);
  return errors.length > 0 ? { errors } : { object: json.value as JsonObject, text: json.text };
}

function jsonText(answer: string): string {
  const trimmed = answer.trim();
  const fenced = /^```[A-Za-z]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  if (fenced) return fenced[1]!.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) return trimmed;
  const first = trimmed.indexOf("{");
  const last = trimmed.lastIndexOf("}");
  return first >= 0 && last > first ? trimmed.slice(first, last + 1) : trimmed;
}
