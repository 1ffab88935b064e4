import type { z } from "zod";
import { flowExecution, flowResource, type FlowExecution, type FlowResource } from "../core/flow/flow-resources.ts";
import { schemaProblems } from "../core/schema-problems.ts";
import type { KubeObject } from "./runtime/client.ts";
import { withoutManagedFields } from "./runtime/informer.ts";
import { undecodable, type Undecodable } from "./runtime/undecodable.ts";
import type { CachedMeta } from "./typed-objects.ts";

/**
 * Flows and FlowExecutions as the caches keep them: decoded once (core/flow/flow-resources.ts), their metadata as it
 * came (owners, deletion), or Undecodable with its problems. A Flow's document is judged by its reconciler, not here.
 */
export type CachedFlow = Omit<FlowResource, "metadata"> & { metadata: CachedMeta };
export type CachedFlowExecution = Omit<FlowExecution, "metadata"> & { metadata: CachedMeta };

function decoder<T extends { metadata: unknown }>(schema: z.ZodType<T>) {
  return (raw: KubeObject): (Omit<T, "metadata"> & { metadata: CachedMeta }) | Undecodable => {
    const object = withoutManagedFields(raw);
    const parsed = schema.safeParse(object);
    if (!parsed.success) return undecodable(object, schemaProblems(parsed.error));
    return { ...parsed.data, metadata: object.metadata as CachedMeta };
  };
}

export const decodeFlow: (raw: KubeObject) => CachedFlow | Undecodable = decoder(flowResource);
export const decodeFlowExecution: (raw: KubeObject) => CachedFlowExecution | Undecodable = decoder(flowExecution);
