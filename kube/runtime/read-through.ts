import { isNotFound, type KubeApi, type KubeObject } from "./client.ts";
import type { Informer } from "./informer.ts";
import { resourcePath, type ResourceType } from "./resources.ts";

/**
 * An object from its cache, read through from the apiserver on a miss (an object created a moment ago that the watch
 * has not brought yet) and put in the cache; undefined when it does not exist.
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
    const read = await from.client.get<T>(resourcePath(from.type, namespace, name));
    from.cache.upsert(read);
    return read;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
