import type { CrewSpec } from "./crew.ts";
import type { Json, JsonObject } from "./json.ts";

/** CrewAI's placeholder: `{name}`, name `[A-Za-z_][A-Za-z0-9_-]*`. Any other brace (JSON, `{ }`, `{1}`) is text. */
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/** Texts of a crew that may hold placeholders: task descriptions and expected outputs, agent role/goal/backstory. */
function interpolatedTexts(spec: CrewSpec): string[] {
  return [
    ...spec.tasks.flatMap((t) => [t.description, t.expectedOutput]),
    ...spec.agents.flatMap((a) => [a.role, a.goal, a.backstory]),
  ];
}

/** Declared inputs first, in order, then every placeholder found in the crew's texts, each name once. */
export function discoverInputs(spec: CrewSpec): string[] {
  const names = [...spec.inputs.map((i) => i.name), ...interpolatedTexts(spec).flatMap(placeholdersIn)];
  return [...new Set(names)];
}

function render(value: Json): string {
  if (typeof value === "string") return value;
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Replaces `{name}` by its input; objects and arrays render as JSON. Unknown placeholders stay as they are. */
export function interpolate(text: string, inputs: JsonObject): string {
  return text.replace(PLACEHOLDER, (whole, name: string) =>
    Object.hasOwn(inputs, name) ? render(inputs[name] as Json) : whole,
  );
}

export type ResolvedInputs = { ok: true; inputs: JsonObject } | { ok: false; missing: string[] };

/**
 * The inputs a kickoff runs with: the given ones, plus declared defaults. Every placeholder and every required
 * declared input must have a value; the answer lists all that are missing.
 */
export function resolveInputs(spec: CrewSpec, given: JsonObject): ResolvedInputs {
  const inputs: JsonObject = { ...given };
  // defineProperty, not assignment: an input may be called `__proto__`, which assignment would not store.
  const fill = (name: string, value: Json) =>
    Object.defineProperty(inputs, name, { value, enumerable: true, writable: true, configurable: true });
  for (const declared of spec.inputs) {
    if (!Object.hasOwn(inputs, declared.name) && declared.default !== undefined) fill(declared.name, declared.default);
  }
  const optional = new Set(spec.inputs.filter((i) => !i.required).map((i) => i.name));
  for (const name of optional) if (!Object.hasOwn(inputs, name)) fill(name, "");
  const missing = discoverInputs(spec).filter((name) => !Object.hasOwn(inputs, name) && !optional.has(name));
  return missing.length ? { ok: false, missing } : { ok: true, inputs };
}
