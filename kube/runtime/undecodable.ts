import type { KubeObject } from "./client.ts";

/**
 * An object its cache could not decode into its type (its spec or status breaks the schema): kept with what the
 * cache keeps of its metadata and its status as it came, so it is still keyed, indexed and owned, and can be reported
 * once (an Event, a condition) by whoever reconciles it; readers that want the typed object pass it by.
 */
export interface Undecodable extends KubeObject {
  metadata: NonNullable<KubeObject["metadata"]>;
  /** What is wrong, one line each (`spec.replicas: Invalid input: expected number`). */
  undecodable: readonly string[];
}

/** Keeps an object that does not decode: its kind, metadata and status, and the problems found. */
export function undecodable(object: KubeObject, problems: readonly string[]): Undecodable {
  return {
    ...(object.apiVersion !== undefined ? { apiVersion: object.apiVersion } : {}),
    ...(object.kind !== undefined ? { kind: object.kind } : {}),
    metadata: object.metadata ?? {},
    ...(object.status !== undefined ? { status: object.status } : {}),
    undecodable: problems,
  };
}

/** Whether a cached object is one that did not decode. */
export function isUndecodable(object: KubeObject): object is Undecodable {
  return Array.isArray((object as Partial<Undecodable>).undecodable);
}

/** The object if it decoded, else undefined. */
export function decodedOrUndefined<T extends KubeObject>(object: T | Undecodable | undefined): T | undefined {
  return object && !isUndecodable(object) ? (object as T) : undefined;
}
