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

/**
 * Equal as JSON: object keys in any order, undefined members absent. One walk over both values, allocating nothing:
 * the controller asks it of every status it might write and of every object its caches decode.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key in x) {
    if (x[key] === undefined) continue;
    members++;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
  }
  for (const key in y) if (y[key] !== undefined) members--;
  return members === 0;
}
