/**
 * Arguments for a tool, made up from its JSON schema the way the `call-tools` test model (and the LLM fixture) does:
 * required properties only; strings "x" (or a valid value of their `format`: email, uri, date-time, date), numbers and integers their minimum (or 0), booleans false, enums and consts
 * their first value, arrays empty, objects filled the same way. Deterministic, so tests can predict every call.
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
  minItems?: number;
  items?: JsonSchema;
  format?: string;
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

export function valueFromSchema(schema: JsonSchema | undefined, depth = 0): unknown {
  if (!schema || depth > MAX_DEPTH) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) return valueFromSchema(alternatives[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "string":
      return (schema.format && FORMATTED[schema.format]) ?? "x";
    case "number":
    case "integer":
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
    case "boolean":
      return false;
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => valueFromSchema(schema.items, depth + 1));
    case "null":
      return null;
    default:
      return argumentsFromSchema(schema, depth);
  }
}

/** The object of required properties a tool's input schema asks for. */
export function argumentsFromSchema(schema: JsonSchema | undefined, depth = 0): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of schema?.required ?? []) args[name] = valueFromSchema(schema?.properties?.[name], depth + 1);
  return args;
}
