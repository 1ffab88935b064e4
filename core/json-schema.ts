import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { JsonObject } from "./json.ts";

/**
 * JSON Schemas that crews give (a task's `outputJson`, a `jsonSchema` guardrail): checked as schemas when a crew is
 * applied, and used to validate answers in the runner. ajv does the work, in the dialect the schema's `$schema` names
 * (draft-07 and 2019-09 as such; none or 2020-12: 2020-12, the dialect of pydantic's `model_json_schema()`, which is
 * where CrewAI users' schemas come from). Keywords and formats ajv does not know (a tool's annotations such as
 * OpenAPI's `nullable`, pydantic's `binary`) are ignored rather than refused, as JSON Schema itself says; a schema that
 * breaks its meta-schema or has a `$ref` that leads nowhere is refused.
 */

/** The most characters of one schema as JSON: it goes into every request for the task, so it stays modest. */
export const MAX_SCHEMA_CHARS = 32 * 1024;
/** The most validation errors reported for one value (feedback to the agent, the task's error). */
export const MAX_REPORTED_ERRORS = 10;

type AnyAjv = Ajv | Ajv2019 | Ajv2020;

const DIALECTS: Record<string, () => AnyAjv> = {
  "http://json-schema.org/draft-07/schema": () => new Ajv(options),
  "https://json-schema.org/draft/2019-09/schema": () => new Ajv2019(options),
  "https://json-schema.org/draft/2020-12/schema": () => new Ajv2020(options),
};
const options = { strict: false, allErrors: true, logger: false } as const;
const instances = new Map<string, AnyAjv>();

function dialectOf(schema: JsonObject): string | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return "https://json-schema.org/draft/2020-12/schema";
  if (typeof declared !== "string") return undefined;
  const uri = declared
    .replace(/#$/, "")
    .replace(/^https:\/\/json-schema\.org\/draft-07/, "http://json-schema.org/draft-07");
  return uri in DIALECTS ? uri : undefined;
}

function ajvFor(dialect: string): AnyAjv {
  let ajv = instances.get(dialect);
  if (!ajv) {
    ajv = DIALECTS[dialect]!();
    addFormats.default(ajv);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/** One validation error in words: where in the value (`/items/0/price`, or `the answer`) and what is wrong. */
function describe(error: ErrorObject): string {
  const where = error.instancePath === "" ? "the answer" : error.instancePath;
  const extra =
    error.keyword === "additionalProperties"
      ? ` ("${String((error.params as { additionalProperty: string }).additionalProperty)}")`
      : error.keyword === "enum"
        ? ` (${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)})`
        : "";
  return `${where} ${error.message ?? "is invalid"}${extra}`;
}

/** The errors, in words, at most MAX_REPORTED_ERRORS of them (and how many more there were). */
export function describeErrors(errors: readonly ErrorObject[]): string[] {
  const lines = errors.slice(0, MAX_REPORTED_ERRORS).map(describe);
  if (errors.length > MAX_REPORTED_ERRORS) lines.push(`and ${errors.length - MAX_REPORTED_ERRORS} more`);
  return lines;
}

export type CompiledSchema = { validate: (value: unknown) => string[]; problems?: undefined } | { problems: string[] };

const compiled = new WeakMap<JsonObject, CompiledSchema>();

/**
 * The schema, ready to validate values (`validate` answers the errors in words, none when the value is valid), or why
 * it is not a usable JSON Schema. Compiled once per schema object.
 */
export function compileJsonSchema(schema: JsonObject): CompiledSchema {
  const known = compiled.get(schema);
  if (known) return known;
  const result = compile(schema);
  compiled.set(schema, result);
  return result;
}

function compile(schema: JsonObject): CompiledSchema {
  const size = JSON.stringify(schema).length;
  if (size > MAX_SCHEMA_CHARS) {
    return { problems: [`is ${size} characters as JSON, above the limit of ${MAX_SCHEMA_CHARS}`] };
  }
  const dialect = dialectOf(schema);
  if (!dialect) {
    return { problems: [`names a $schema kubecrew does not support (use draft-07, 2019-09 or 2020-12)`] };
  }
  const ajv = ajvFor(dialect);
  if (!ajv.validateSchema(schema)) {
    const errors = (ajv.errors ?? []).map((e) => `${e.instancePath || "the schema"} ${e.message ?? "is invalid"}`);
    return { problems: [...new Set(errors)].slice(0, MAX_REPORTED_ERRORS) };
  }
  let validator: ValidateFunction;
  try {
    validator = ajv.compile(schema);
  } catch (err) {
    return { problems: [err instanceof Error ? err.message : String(err)] };
  } finally {
    // Compiled functions stay with their schema (the WeakMap above); ajv's own cache would keep every schema forever.
    ajv.removeSchema(schema);
  }
  return { validate: (value) => (validator(value) ? [] : describeErrors(validator.errors ?? [])) };
}

/** Why `schema` is not a usable JSON Schema (nothing when it is). */
export function jsonSchemaProblems(schema: JsonObject): string[] {
  return compileJsonSchema(schema).problems ?? [];
}
