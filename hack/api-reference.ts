/**
 * Renders an OpenAPI 3.1 document as the Markdown reference of docs/api.md: the operations by tag, each with its
 * parameters, body and answers, then every named schema as a table of its fields. hack/generate-api-docs.ts feeds it
 * the crew API's document.
 */

/** The parts of an OpenAPI document this renderer reads; anything else is ignored. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses: Record<string, Response>;
}
interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Schema }>;
}
type Schema = { [key: string]: unknown };

/** Section titles of the tags the crew API uses; another tag is shown by its own name. */
const TAG_TITLES: Record<string, string> = {
  "default crew": "Runs of a crew",
  crews: "Crews",
  connections: "Connected apps",
  oauth: "Token endpoint",
  admin: "Admin API",
  service: "Service",
};

/** Every crew is also served under this prefix; an operation that exists in both forms is shown once. */
const CREW_PREFIX = "/crews/{crew}";

const METHOD_ORDER = ["get", "post", "put", "patch", "delete"];

/** Text made safe for one cell of a Markdown table. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");
}

const code = (text: string) => `\`${text}\``;

/** A schema name as a link to its section below. */
const schemaLink = (name: string) => `[${name}](#${name.toLowerCase()})`;

function refName(schema: Schema): string | undefined {
  return typeof schema.$ref === "string" ? schema.$ref.replace("#/components/schemas/", "") : undefined;
}

/** A short type expression for a schema: `string (uri)`, `array of [Step](#step)`, `"completed"`, … */
function typeOf(schema: Schema): string {
  const ref = refName(schema);
  if (ref) return schemaLink(ref);
  if ("const" in schema) return code(JSON.stringify(schema.const));
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.map((v) => code(JSON.stringify(v)));
    return values.length <= 3 ? values.join(" or ") : `one of ${values.join(", ")}`;
  }
  for (const union of ["anyOf", "oneOf"]) {
    if (Array.isArray(schema[union])) return `one of ${(schema[union] as Schema[]).map(typeOf).join(", ")}`;
  }
  switch (schema.type) {
    case "array":
      return `array of ${schema.items ? typeOf(schema.items as Schema) : "anything"}`;
    case "object":
      if (schema.additionalProperties && typeof schema.additionalProperties === "object" && !schema.properties)
        return `object of ${typeOf(schema.additionalProperties as Schema)}`;
      return "object";
    case undefined:
      return "any JSON";
    default:
      return typeof schema.format === "string" ? `${String(schema.type)} (${schema.format})` : String(schema.type);
  }
}

/** Limits worth a reader's notice; zod's safe-integer bounds say nothing and are left out. */
function limits(schema: Schema): string[] {
  const notes: string[] = [];
  const small = (key: string) =>
    typeof schema[key] === "number" && Math.abs(schema[key]) < Number.MAX_SAFE_INTEGER ? schema[key] : undefined;
  const [minLength, maxLength] = [small("minLength"), small("maxLength")];
  if (minLength !== undefined || maxLength !== undefined)
    notes.push(`${minLength ?? 0}–${maxLength ?? "∞"} characters`);
  const [minimum, maximum] = [small("minimum"), small("maximum")];
  if (minimum !== undefined && maximum !== undefined) notes.push(`${minimum} to ${maximum}`);
  else if (minimum !== undefined) notes.push(`at least ${minimum}`);
  else if (maximum !== undefined) notes.push(`at most ${maximum}`);
  const [minItems, maxItems] = [small("minItems"), small("maxItems")];
  if (minItems !== undefined || maxItems !== undefined) notes.push(`${minItems ?? 0}–${maxItems ?? "∞"} items`);
  // A format (uuid, uri, …) says what its pattern spells out.
  if (typeof schema.pattern === "string" && typeof schema.format !== "string")
    notes.push(`pattern ${code(schema.pattern)}`);
  if ("default" in schema) notes.push(`default ${code(JSON.stringify(schema.default))}`);
  return notes;
}

function describe(schema: Schema): string {
  const text = typeof schema.description === "string" ? schema.description : "";
  const notes = limits(schema).join("; ");
  if (!notes) return text;
  return text ? `${text} (${notes})` : notes;
}

/** The rows of an object's fields, nested objects and arrays of objects flattened as `a.b` and `a[].b`. */
function fieldRows(schema: Schema, prefix = ""): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const row = `| ${code(path)} | ${cell(typeOf(field))} | ${required.has(name) ? "yes" : ""} | ${cell(describe(field))} |`;
    const items = field.type === "array" ? (field.items as Schema | undefined) : undefined;
    if (field.type === "object" && field.properties) return [row, ...fieldRows(field, `${path}.`)];
    if (items && !refName(items) && items.type === "object" && items.properties)
      return [row, ...fieldRows(items, `${path}[].`)];
    return [row];
  });
}

function schemaSection(name: string, schema: Schema): string[] {
  const lines = [`### ${name}`, ""];
  const text = describe(schema);
  if (schema.properties) {
    if (text) lines.push(text, "");
    lines.push("| field | type | required | meaning |", "| --- | --- | --- | --- |", ...fieldRows(schema), "");
  } else {
    lines.push(`${typeOf(schema)}${text ? `: ${text}` : ""}`, "");
  }
  return lines;
}

interface Entry {
  method: string;
  paths: string[];
  operation: Operation;
}

/** Operations in document order, the `/crews/{crew}/…` form of a default-crew operation folded into it. */
function entries(document: OpenApiDocument): Entry[] {
  const folded = new Set<string>();
  const list: Entry[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const methods = Object.keys(item).sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b));
    for (const method of methods) {
      if (folded.has(`${method} ${path}`)) continue;
      const crewForm = `${CREW_PREFIX}${path}`;
      const twin = document.paths[crewForm]?.[method];
      if (twin) folded.add(`${method} ${crewForm}`);
      // The twin's parameters are the fuller set: the crew's name, which only its form has, beside the rest.
      const own = new Set((item[method]!.parameters ?? []).map((p) => p.name));
      const parameters = twin?.parameters?.map((p) =>
        own.has(p.name) ? p : { ...p, description: `${p.description ?? ""} (in the ${code(`${CREW_PREFIX}/…`)} form)` },
      );
      const operation = twin ? { ...item[method]!, parameters } : item[method]!;
      list.push({ method, paths: twin ? [path, crewForm] : [path], operation });
    }
  }
  return list;
}

const responseKey = (status: string, response: Response) => `${status} ${response.description}`;

/** Answers most operations share word for word: listed once, and named by status on each operation. */
function commonResponses(list: Entry[]): Map<string, [string, Response]> {
  const counts = new Map<string, { count: number; answer: [string, Response] }>();
  for (const { operation } of list) {
    for (const [status, response] of Object.entries(operation.responses)) {
      const key = responseKey(status, response);
      const seen = counts.get(key) ?? { count: 0, answer: [status, response] as [string, Response] };
      counts.set(key, { ...seen, count: seen.count + 1 });
    }
  }
  return new Map([...counts].filter(([, { count }]) => count * 2 > list.length).map(([k, { answer }]) => [k, answer]));
}

function bodyOf(content: Record<string, { schema?: Schema }> | undefined): string {
  if (!content) return "";
  return Object.entries(content)
    .map(([type, { schema }]) => (schema && refName(schema) ? typeOf(schema) : `${code(type)}`))
    .join(", ");
}

function answerRow(status: string, response: Response): string {
  const headers = Object.keys(response.headers ?? {});
  const meaning = headers.length ? `${response.description} (${headers.map(code).join(", ")})` : response.description;
  return `| ${status} | ${cell(meaning)} | ${bodyOf(response.content)} |`;
}

function operationSection(entry: Entry, common: Map<string, [string, Response]>): string[] {
  const { method, paths, operation } = entry;
  const lines = [`#### ${paths.map((p) => code(`${method.toUpperCase()} ${p}`)).join(", ")}`, ""];
  lines.push(`${operation.summary ?? ""}${operation.summary?.endsWith(".") ? "" : "."}`, "");
  if (operation.description) lines.push(operation.description, "");
  const auth = Array.isArray(operation.security) && operation.security.length === 0 ? "none" : "a bearer token";
  lines.push(`Authorization: ${auth}.`, "");
  if (operation.parameters?.length) {
    lines.push("| parameter | in | required | meaning |", "| --- | --- | --- | --- |");
    for (const p of operation.parameters) {
      const meaning = describe({ ...p.schema, description: p.description ?? p.schema?.description });
      lines.push(`| ${code(p.name)} | ${p.in} | ${p.required ? "yes" : ""} | ${cell(meaning)} |`);
    }
    lines.push("");
  }
  if (operation.requestBody) lines.push(`Body: ${bodyOf(operation.requestBody.content)}.`, "");
  const own = Object.entries(operation.responses).filter(([s, r]) => !common.has(responseKey(s, r)));
  const shared = Object.entries(operation.responses).filter(([s, r]) => common.has(responseKey(s, r)));
  lines.push("| status | meaning | body |", "| --- | --- | --- |", ...own.map(([s, r]) => answerRow(s, r)), "");
  if (shared.length)
    lines.push(`Also the [common answers](#common-answers): ${shared.map(([s]) => s).join(", ")}.`, "");
  return lines;
}

/** The reference part of docs/api.md, unformatted Markdown (prettier lays the tables out). */
export function apiReference(document: OpenApiDocument): string {
  const list = entries(document);
  const common = commonResponses(list);
  const known = Object.keys(TAG_TITLES);
  const rank = (tag: string) => (known.includes(tag) ? known.indexOf(tag) : known.length);
  const tags = [...new Set(list.map((e) => e.operation.tags?.[0] ?? "other"))].sort((a, b) => rank(a) - rank(b));
  const lines: string[] = ["## Operations", ""];
  for (const tag of tags) {
    lines.push(`### ${TAG_TITLES[tag] ?? tag}`, "");
    for (const entry of list.filter((e) => (e.operation.tags?.[0] ?? "other") === tag))
      lines.push(...operationSection(entry, common));
  }
  lines.push("## Common answers", "", "| status | meaning | body |", "| --- | --- | --- |");
  lines.push(...[...common.values()].sort(([a], [b]) => a.localeCompare(b)).map(([s, r]) => answerRow(s, r)), "");
  lines.push("## Schemas", "");
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {}))
    lines.push(...schemaSection(name, schema));
  return lines.join("\n");
}
