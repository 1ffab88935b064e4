import { z } from "zod";

/** Any JSON value: input values, meta and webhook payloads are free-form JSON. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export const jsonValue: z.ZodType<Json> = z
  .lazy(() =>
    z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
  )
  // Named, so the OpenAPI document (and the clients generated from it) calls it JsonValue, not `__schema0`.
  .meta({ id: "JsonValue", description: "Any JSON value" });

export const jsonObject = z.record(z.string(), jsonValue);
export type JsonObject = z.infer<typeof jsonObject>;

/** Equal as JSON: object keys in any order, undefined members absent. */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}
