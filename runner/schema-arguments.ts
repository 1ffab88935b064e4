/**
 * Values made up from a JSON schema: a tool's arguments, the way the `call-tools` test model (and the LLM fixture)
 * calls tools, and the mock model's structured answers. Required properties only; strings "x" (repeated up to their
 * `minLength`, or a valid value of their `format`: email, uri, date-time, date), numbers and integers their minimum
 * (or 0), booleans false, enums and consts their first value, arrays as many items as `minItems`, objects filled the
 * same way; local `$ref`s (`#/$defs/…`, `#/definitions/…`, as pydantic writes nested models) followed and `allOf`
 * merged. Deterministic, so tests can predict every call.
 */
export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minItems?: number;
  minLength?: number;
  items?: JsonSchema;
  format?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  definitions?: Record<string, JsonSchema>;
};

/** A string that passes the schema's `format` check, as a validating server (the apps' schemas) insists on. */
const FORMATTED: Record<string, string> = {
  email: "x@example.com",
  uri: "https://example.com/x",
  url: "https://example.com/x",
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
};

const MAX_DEPTH = 8;

/** The schema a local `$ref` points to (within `root`), or undefined. */
function resolve(ref: string, root: JsonSchema): JsonSchema | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!match) return ref === "#" ? root : undefined;
  return root[match[1] as "$defs" | "definitions"]?.[
    decodeURIComponent(match[2]!).replaceAll("~1", "/").replaceAll("~0", "~")
  ];
}

/** `allOf`'s members merged into one schema (their properties and required lists together). */
function merged(schema: JsonSchema, root: JsonSchema, depth: number): JsonSchema {
  const { allOf, ...rest } = schema;
  let out: JsonSchema = rest;
  for (const part of allOf ?? []) {
    const p = part.$ref ? (resolve(part.$ref, root) ?? {}) : part;
    const inner = p.allOf && depth < MAX_DEPTH ? merged(p, root, depth + 1) : p;
    out = {
      ...inner,
      ...out,
      properties: { ...inner.properties, ...out.properties },
      required: [...new Set([...(inner.required ?? []), ...(out.required ?? [])])],
    };
  }
  return out;
}

export function valueFromSchema(
  schema: JsonSchema | undefined,
  depth = 0,
  root: JsonSchema | undefined = schema,
): unknown {
  if (!schema || depth > MAX_DEPTH) return null;
  if (schema.$ref) return valueFromSchema(root && resolve(schema.$ref, root), depth + 1, root);
  if (schema.allOf) return valueFromSchema(merged(schema, root ?? schema, depth), depth + 1, root);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return valueFromSchema(alternatives[0], depth + 1, root);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "string":
      return (schema.format && FORMATTED[schema.format]) ?? "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "number":
    case "integer":
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
    case "boolean":
      return false;
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => valueFromSchema(schema.items, depth + 1, root));
    case "null":
      return null;
    default:
      return argumentsFromSchema(schema, depth, root);
  }
}

/** The object of required properties a tool's input schema asks for. */
export function argumentsFromSchema(
  schema: JsonSchema | undefined,
  depth = 0,
  root: JsonSchema | undefined = schema,
): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of schema?.required ?? []) {
    args[name] = valueFromSchema(schema?.properties?.[name], depth + 1, root);
  }
  return args;
}
