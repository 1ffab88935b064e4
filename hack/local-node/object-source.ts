import type { CoreV1Api } from "@kubernetes/client-node";
import { isNotFound } from "./api-errors.ts";
import type { ObjectSource } from "./env.ts";

/** The ConfigMaps and Secrets of `namespace`, read from the apiserver each time (as the kubelet would see them). */
export function apiObjectSource(core: CoreV1Api, namespace: string): ObjectSource {
  const read = async <T>(fetch: () => Promise<T>) => {
    try {
      return await fetch();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  const decode = (data: Record<string, string> | undefined, encoding: BufferEncoding) =>
    Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, encoding)]));
  return {
    async configMap(name) {
      const cm = await read(() => core.readNamespacedConfigMap({ name, namespace }));
      return cm && { ...decode(cm.data, "utf8"), ...decode(cm.binaryData, "base64") };
    },
    async secret(name) {
      const secret = await read(() => core.readNamespacedSecret({ name, namespace }));
      return secret && decode(secret.data, "base64");
    },
  };
}
