import { join } from "node:path";
import { MODEL_DIR_ENV, modelCacheDir } from "../../core/local-models.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The folder npm test keeps its real model in, outside the clone: KUBECREW_MODEL_DIR, else the models folder of the
 * cache hack/ uses (KUBECREW_CACHE), else `kubecrew model pull`'s own folder (~/.cache/kubecrew/models).
 */
export function testModelDir(env: Env): string {
  if (env[MODEL_DIR_ENV]?.trim()) return modelCacheDir(env);
  const cache = env.KUBECREW_CACHE?.trim();
  return cache ? join(cache, "models") : modelCacheDir(env);
}
