import { sameJson } from "../core/json.ts";

/**
 * The RFC 7386 JSON merge patch that turns `before` into `after`: changed keys with their new value, removed keys as
 * null, nested objects patched key by key, arrays replaced whole. Undefined counts as absent. Empty object: no change.
 */
export function mergePatchDiff(before: unknown, after: unknown): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const a = isObject(before) ? before : {};
  const b = isObject(after) ? after : {};
  for (const key of Object.keys(a)) {
    if (a[key] !== undefined && (b[key] === undefined || b[key] === null)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(b)) {
    if (value === undefined) continue;
    const old = a[key];
    if (isObject(value) && isObject(old)) {
      const nested = mergePatchDiff(old, value);
      if (Object.keys(nested).length > 0) patch[key] = nested;
    } else if (!sameJson(old, value)) {
      patch[key] = value;
    }
  }
  return patch;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
