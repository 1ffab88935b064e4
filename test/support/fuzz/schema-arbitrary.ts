import fc from "fast-check";

/** The JSON Schema subset zod-openapi writes into kubecrew's OpenAPI 3.1 documents. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

const formats: Record<string, () => fc.Arbitrary<string>> = {
  uuid: () => fc.uuid(),
  uri: () => fc.webUrl(),
  "date-time": () => fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
};

/**
 * Values valid for `schema` (a schema of an OpenAPI document, `$ref`s resolved against its components), for
 * property-based requests: every documented shape, nested at most `depth` levels (recursive schemas such as
 * JsonValue stop there with scalars). `overrides` replaces the values of a string format (e.g. `uri`, so that webhook
 * URLs point at loopback and fuzzing sends nothing off the machine).
 */
export function valuesOf(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  depth = 3,
  overrides: Record<string, fc.Arbitrary<string>> = {},
): fc.Arbitrary<unknown> {
  const inner = (s: JsonSchema, d: number) => valuesOf(s, components, d, overrides);
  if (schema.$ref) {
    const name = schema.$ref.replace("#/components/schemas/", "");
    const target = components[name];
    if (!target) throw new Error(`unknown schema ${schema.$ref}`);
    return inner(target, depth);
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const usable = depth > 0 ? alternatives : alternatives.filter((a) => !isContainer(a, components));
    return fc.oneof(...(usable.length ? usable : alternatives).map((a) => inner(a, depth - 1)));
  }
  if (schema.allOf?.length === 1) return inner(schema.allOf[0]!, depth);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string": {
      const override = schema.format && overrides[schema.format];
      if (override) return override;
      const format = schema.format && formats[schema.format];
      if (format) return format();
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
    }
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case "number":
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum, max: schema.maximum });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return depth <= 0 ? fc.constant([]) : fc.array(inner(schema.items ?? {}, depth - 1), { maxLength: 4 });
    case "object": {
      const properties = Object.entries(schema.properties ?? {});
      const required = new Set(schema.required ?? []);
      const known = fc.record(Object.fromEntries(properties.map(([name, s]) => [name, inner(s, depth - 1)])), {
        requiredKeys: properties.map(([name]) => name).filter((name) => required.has(name)),
      });
      const extra = schema.additionalProperties;
      if (!extra || depth <= 0) return known;
      const more = fc.dictionary(
        fc.string({ minLength: 1, maxLength: 12 }),
        inner(extra === true ? {} : extra, depth - 1),
        { maxKeys: 3 },
      );
      return fc.tuple(known, more).map(([k, m]) => ({ ...m, ...k }));
    }
    default:
      // No type: any JSON value.
      return depth <= 0 ? fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)) : fc.jsonValue();
  }
}

function isContainer(schema: JsonSchema, components: Record<string, JsonSchema>): boolean {
  if (schema.$ref) return isContainer(components[schema.$ref.replace("#/components/schemas/", "")] ?? {}, components);
  return schema.type === "array" || schema.type === "object";
}
