import { isNotFound, type KubeApi, type KubeObject } from "./client.ts";
import type { Informer } from "./informer.ts";
import { resourcePath, type ResourceType } from "./resources.ts";

/**
 * An object from its cache, read through from the apiserver on a miss (an object created a moment ago that the watch
 * has not brought yet) and put in the cache, decoded as the cache keeps it; undefined when it does not exist.
 */
export async function readThrough<T extends KubeObject>(
  from: { cache: Informer<T>; client: Pick<KubeApi, "get">; type: ResourceType; onMiss?: () => void },
  namespace: string,
  name: string,
): Promise<T | undefined> {
  const cached = from.cache.get(namespace, name);
  if (cached) return cached;
  from.onMiss?.();
  try {
    const read = await from.client.get<KubeObject>(resourcePath(from.type, namespace, name));
    return from.cache.upsert(read);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
