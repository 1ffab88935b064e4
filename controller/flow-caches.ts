import type { Logger } from "../core/logger.ts";
import { decodeFlow, decodeFlowExecution, type CachedFlow, type CachedFlowExecution } from "../kube/flow-objects.ts";
import { FLOW_EXECUTIONS, FLOWS, resourcePath } from "../kube/resources.ts";
import type { KubeClient } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { Undecodable } from "../kube/runtime/undecodable.ts";

export type { CachedFlow, CachedFlowExecution };

/** The flow reconcilers' caches: Flows (their documents kept as written; the reconciler judges them) and their runs. */
export interface FlowCaches {
  flows: Informer<CachedFlow | Undecodable>;
  runs: Informer<CachedFlowExecution | Undecodable>;
}

export function createFlowCaches(o: {
  client: Pick<KubeClient, "list" | "watch">;
  log: Logger;
  namespace: string;
  watchTimeoutSeconds: number;
}): FlowCaches {
  const ns = o.namespace || undefined;
  const base = { client: o.client, log: o.log, watchTimeoutSeconds: o.watchTimeoutSeconds };
  return {
    flows: new Informer({ ...base, path: resourcePath(FLOWS, ns), transform: decodeFlow }),
    runs: new Informer({ ...base, path: resourcePath(FLOW_EXECUTIONS, ns), transform: decodeFlowExecution }),
  };
}
