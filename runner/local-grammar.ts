/**
 * The JSON schemas the `local` provider constrains a model's output with (node-llama-cpp turns them into GBNF
 * grammars, so the text it samples always parses). node-llama-cpp knows a subset of JSON Schema: these functions
 * bring a tool's or an output's schema into it, and build the one schema of a turn that may call a tool.
 */
import type { GbnfJsonSchema } from "node-llama-cpp";

type Schema = Record<string, unknown>;

/** Bounds added where a schema sets none, so a small model's answer ends within its token budget. */
export const DEFAULT_STRING_MAX_LENGTH = 400;
export const DEFAULT_ARRAY_MAX_ITEMS = 8;
/**
 * The largest maxLength and maxItems a grammar keeps: llama.cpp refuses a grammar that repeats a rule 2000 times or
 * more, counting each repeated symbol ("Failed to parse grammar"), so larger bounds are lowered to these.
 */
export const MAX_GRAMMAR_STRING_LENGTH = 1999;
export const MAX_GRAMMAR_ARRAY_ITEMS = 1000;

const bound = (value: unknown, fallback: number, most: number) =>
  Math.min(typeof value === "number" ? value : fallback, most);

const scalarTypes = ["string", "number", "integer", "boolean", "null"] as const;
type ScalarType = (typeof scalarTypes)[number];

const anyValue: GbnfJsonSchema = {
  oneOf: [
    { type: "string", maxLength: DEFAULT_STRING_MAX_LENGTH },
    { type: ["number", "boolean", "null"] },
    { type: "object", additionalProperties: false },
  ],
};

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe<T extends object>(schema: T, source: Schema): T {
  return typeof source.description === "string" ? { ...schema, description: source.description } : schema;
}

/**
 * A JSON schema in node-llama-cpp's subset: the keywords it knows are kept (type, properties, required, items, enum,
 * const, anyOf/oneOf, length and item bounds, string formats it knows), the others dropped: the answer is still
 * validated against the original schema by the runner. Strings and arrays without a bound get one.
 */
export function grammarSchema(source: unknown): GbnfJsonSchema {
  if (!isSchema(source)) return anyValue;
  if ("const" in source) return describe({ const: source.const as string | number | boolean | null }, source);
  if (Array.isArray(source.enum))
    return describe({ enum: source.enum as (string | number | boolean | null)[] }, source);
  const alternatives = (source.oneOf ?? source.anyOf) as unknown;
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    return describe({ oneOf: alternatives.map(grammarSchema) }, source);
  }
  const types = (Array.isArray(source.type) ? source.type : [source.type]).filter((t) => typeof t === "string");
  if (types.length === 0) return source.properties ? objectSchema(source) : anyValue;
  if (types.length > 1) {
    const parts = types.map((type) => grammarSchema({ ...source, type }));
    return describe({ oneOf: parts }, source);
  }
  const type = types[0] as string;
  if (type === "object") return objectSchema(source);
  if (type === "array") {
    const maxItems = bound(source.maxItems, DEFAULT_ARRAY_MAX_ITEMS, MAX_GRAMMAR_ARRAY_ITEMS);
    const minItems = typeof source.minItems === "number" ? Math.min(source.minItems, maxItems) : undefined;
    return describe(
      { type: "array", items: grammarSchema(source.items ?? {}), maxItems, ...(minItems ? { minItems } : {}) },
      source,
    );
  }
  if (type === "string") {
    if (source.format === "date-time" || source.format === "date" || source.format === "time") {
      return describe({ type: "string", format: source.format }, source);
    }
    const maxLength = bound(source.maxLength, DEFAULT_STRING_MAX_LENGTH, MAX_GRAMMAR_STRING_LENGTH);
    const minLength = typeof source.minLength === "number" ? Math.min(source.minLength, maxLength) : undefined;
    return describe({ type: "string", maxLength, ...(minLength ? { minLength } : {}) }, source);
  }
  if ((scalarTypes as readonly string[]).includes(type)) return describe({ type: type as ScalarType }, source);
  return anyValue;
}

function objectSchema(source: Schema): GbnfJsonSchema {
  const properties = isSchema(source.properties) ? source.properties : {};
  const required = Array.isArray(source.required) ? source.required.filter((r) => typeof r === "string") : [];
  // Every property is written (as the grammar orders them): a small model left free to stop early writes none.
  return describe(
    {
      type: "object",
      properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, grammarSchema(v)])),
      required: [...new Set([...required, ...Object.keys(properties)])],
      additionalProperties: false,
    },
    source,
  );
}

/** A tool the model may call this turn. */
export interface OfferedTool {
  name: string;
  inputSchema: unknown;
}

/** The key of a turn's reply that calls a tool, and of the one that answers. */
export const TOOL_KEY = "tool";
export const ARGUMENTS_KEY = "arguments";
export const ANSWER_KEY = "answer";

/**
 * The schema of a turn that may call a tool: `{"tool": <name>, "arguments": {...}}` for each offered tool, or
 * `{"answer": ...}` (text, or the structured output's schema) unless a tool call is required.
 */
export function turnSchema(tools: OfferedTool[], answer: unknown | undefined, toolRequired: boolean): GbnfJsonSchema {
  const calls: GbnfJsonSchema[] = tools.map((t) => ({
    type: "object",
    properties: { [TOOL_KEY]: { const: t.name }, [ARGUMENTS_KEY]: grammarSchema(t.inputSchema ?? {}) },
    required: [TOOL_KEY, ARGUMENTS_KEY],
    additionalProperties: false,
  }));
  const answerSchema: GbnfJsonSchema = {
    type: "object",
    properties: {
      [ANSWER_KEY]:
        answer === undefined
          ? { type: "string", minLength: 1, maxLength: MAX_GRAMMAR_STRING_LENGTH }
          : grammarSchema(answer),
    },
    required: [ANSWER_KEY],
    additionalProperties: false,
  };
  const all = toolRequired && calls.length > 0 ? calls : [...calls, answerSchema];
  return all.length === 1 ? all[0]! : { oneOf: all };
}

/**
 * Characters a token holds at the least in the text these bounds are for (English in JSON strings; a small model
 * repeating itself writes ~4): the bounds below assume 3, so the text fits the tokens.
 */
const CHARS_PER_TOKEN = 3;
/** Tokens a string's key, quotes and separators take, at the most. */
const TOKENS_PER_STRING = 6;
/** The least a string's bound is lowered to. */
const MIN_STRING_BOUND = 16;

/** How many strings a value of the schema may hold at most (an array's times its maxItems; alternatives: the most). */
function stringSlots(schema: unknown): number {
  if (!isSchema(schema)) return 0;
  if (Array.isArray(schema.oneOf)) return Math.max(0, ...schema.oneOf.map(stringSlots));
  if (schema.type === "string") return schema.format === undefined ? 1 : 0;
  if (schema.type === "object" && isSchema(schema.properties)) {
    return Object.values(schema.properties).reduce((n: number, p) => n + stringSlots(p), 0);
  }
  if (schema.type === "array") return (schema.maxItems as number) * stringSlots(schema.items);
  return 0;
}

function lowerStrings(schema: unknown, most: number): unknown {
  if (!isSchema(schema)) return schema;
  if (Array.isArray(schema.oneOf)) return { ...schema, oneOf: schema.oneOf.map((s) => lowerStrings(s, most)) };
  if (schema.type === "string" && typeof schema.maxLength === "number" && schema.maxLength > most) {
    const least = typeof schema.minLength === "number" ? schema.minLength : 0;
    return { ...schema, maxLength: Math.max(most, least) };
  }
  if (schema.type === "object" && isSchema(schema.properties)) {
    const properties = Object.entries(schema.properties).map(([k, p]) => [k, lowerStrings(p, most)]);
    return { ...schema, properties: Object.fromEntries(properties) };
  }
  if (schema.type === "array") return { ...schema, items: lowerStrings(schema.items, most) };
  return schema;
}

/**
 * The schema with its strings' bounds lowered so that a whole reply fits `maxTokens`: a reply the token limit cuts
 * does not parse, and a small model left a long bound fills it (repeating itself) until it is cut. The budget is
 * shared by every string the reply may hold.
 */
export function fitToTokens(schema: GbnfJsonSchema, maxTokens: number): GbnfJsonSchema {
  const slots = stringSlots(schema);
  if (slots === 0) return schema;
  const budget = Math.max(0, maxTokens - TOKENS_PER_STRING * slots) * CHARS_PER_TOKEN;
  return lowerStrings(schema, Math.max(MIN_STRING_BOUND, Math.floor(budget / slots))) as GbnfJsonSchema;
}
