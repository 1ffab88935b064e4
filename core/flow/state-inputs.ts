import { compileJsonSchema } from "../json-schema.ts";
import type { Json, JsonObject } from "../json.ts";
import type { FlowDefinition } from "./definition.ts";

/** The schema of a flow's state, when its `state` has one (json_schema, or a pydantic state's fallback). */
function stateSchema(definition: FlowDefinition): JsonObject | undefined {
  const state = definition.state;
  return state && "json_schema" in state && state.json_schema ? (state.json_schema as JsonObject) : undefined;
}

/** `GET /inputs` of a flow: the state schema's fields, else the keys of its default state. */
export function flowInputs(definition: FlowDefinition): string[] {
  const properties = stateSchema(definition)?.properties;
  if (properties && typeof properties === "object" && !Array.isArray(properties)) return Object.keys(properties);
  return Object.keys(definition.state?.default ?? {});
}

export type KickoffState =
  { ok: true; state: Record<string, Json> } | { ok: false; missing: string[]; invalid: string[] };

/**
 * The initial state of a kickoff: the state's defaults with the kickoff's inputs over them, checked against the state
 * schema. A required field neither given nor defaulted is missing; every other complaint of the schema is invalid.
 */
export function kickoffState(definition: FlowDefinition, inputs: Record<string, Json>): KickoffState {
  const state = { ...(definition.state?.default ?? {}), ...inputs } as Record<string, Json>;
  const schema = stateSchema(definition);
  if (!schema) return { ok: true, state };
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
  const missing = required.filter((name) => state[name] === undefined);
  const compiled = compileJsonSchema(schema);
  const problems = compiled.problems ? [] : compiled.validate(state);
  const invalid = problems.filter((p) => !missing.some((name) => p.includes(`'${name}'`) || p.includes(`"${name}"`)));
  return missing.length || invalid.length ? { ok: false, missing, invalid } : { ok: true, state };
}
