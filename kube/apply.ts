import { isAlreadyExists, isConflict, isNotFound, type KubeApi, type KubeObject } from "./runtime/client.ts";
import type { Informer } from "./runtime/informer.ts";
import { StaleObjectError } from "./runtime/worker.ts";
import { mergePatchDiff } from "./merge-patch.ts";
import { resourcePath, type ResourceType } from "./resources.ts";

/**
 * The one way the reconcilers write: a status when it differs, a child when it is absent, a delete that finds nothing
 * is done. Every write is idempotent, so a reconcile that is repeated (a crash, a replayed event) does no harm.
 */

/**
 * Patches the object's status to `desired` (a merge patch of what differs from the cached object's, guarded by the
 * resourceVersion it was computed from) and puts the answer in the cache; answers the object the cache holds then
 * (decoded), or undefined when nothing differed and nothing was written.
 */
export async function applyStatus<T extends KubeObject>(
  client: Pick<KubeApi, "mergePatch">,
  cache: Informer<T>,
  type: ResourceType,
  object: KubeObject,
  desired: unknown,
): Promise<T | undefined> {
  const patch = mergePatchDiff(object.status, desired);
  if (Object.keys(patch).length === 0) return undefined;
  const { namespace = "", name = "" } = object.metadata ?? {};
  try {
    const updated = await client.mergePatch<KubeObject>(resourcePath(type, namespace, name, "status"), {
      metadata: { resourceVersion: object.metadata?.resourceVersion },
      status: patch,
    });
    return cache.upsert(updated);
  } catch (err) {
    if (isConflict(err)) throw new StaleObjectError(`status of ${namespace}/${name} changed meanwhile`);
    throw err;
  }
}

/** Creates the object unless one of its name exists; the created object, or undefined when it existed. */
export async function createIfAbsent<T extends KubeObject>(
  client: Pick<KubeApi, "create">,
  path: string,
  body: T,
): Promise<T | undefined> {
  try {
    return await client.create(path, body);
  } catch (err) {
    if (isAlreadyExists(err)) return undefined;
    throw err;
  }
}

/** Deletes the object; false when it was already gone. */
export async function deleteIfPresent(
  client: Pick<KubeApi, "delete">,
  path: string,
  options: Parameters<KubeApi["delete"]>[1] = {},
): Promise<boolean> {
  try {
    await client.delete(path, options);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
