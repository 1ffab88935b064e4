import { createHash } from "node:crypto";

/**
 * Names of a flow run's children, derived from what they are so a restarted controller finds what it made before and
 * never makes a second: a method run's result `<run>-m-<hash>`, a method's child execution `<run>-<hash>` (for an
 * `each`, per item and step). The hash keeps the names short (a run is named by a UUID; a child execution's Jobs add
 * `-<task index>` and must stay within 63 characters).
 */

/** Hashes already taken: a look at an `each` names every item's child again, on each of its item events. */
const hashes = new Map<string, string>();
const KEPT_HASHES = 10_000;

function hash(text: string): string {
  let held = hashes.get(text);
  if (held === undefined) {
    if (hashes.size >= KEPT_HASHES) hashes.clear();
    hashes.set(text, (held = createHash("sha256").update(text).digest("hex").slice(0, 10)));
  }
  return held;
}

/** The CrewTaskResult holding a method run's output (`activation` is `<method>#<n>`). */
export function methodResultName(run: string, activation: string): string {
  return `${run}-m-${hash(activation)}`;
}

/** The CrewExecution of a method run's crew or agent; inside an `each`, of one item's step. */
export function methodExecutionName(run: string, activation: string, item?: { index: number; step: string }): string {
  const place = item ? `${activation}/${item.index}/${item.step}` : activation;
  return `${run}-${hash(place)}`;
}

/** A method's name as a label value (at most 63 characters). */
export function methodLabel(method: string): string {
  return method.length <= 63 ? method : `${method.slice(0, 52)}-${hash(method)}`;
}
