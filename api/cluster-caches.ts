import type { Logger } from "../core/logger.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, CREWS, LABEL_EXECUTION, resourcePath } from "../kube/resources.ts";
import type { KubeClient, KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedCrew, CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";
import { crewForCache, executionForCache, resultForCache } from "./cache-transforms.ts";
import { ExecutionChanges } from "./execution-changes.ts";

/** The execution a result belongs to (its label): the results' index key. */
export const executionOf = (o: KubeObject): string[] => {
  const execution = o.metadata?.labels?.[LABEL_EXECUTION];
  return execution ? [execution] : [];
};

/**
 * The API's informer caches of one namespace: Crews, CrewExecutions and CrewTaskResults, each object decoded once as
 * it enters (cache-transforms.ts), so polling `/status` costs the apiserver nothing and no reader parses an object
 * again. Event streams are told of each change the informers see (`changes`), instead of polling the caches.
 */
export class ClusterCaches {
  readonly crews: Informer<CachedCrew | Undecodable>;
  readonly executions: Informer<CachedExecution | Undecodable>;
  /** Indexed by execution name. */
  readonly results: Informer<CachedTaskResult | Undecodable>;
  readonly changes = new ExecutionChanges();
  /** How often each execution's results changed: a view is built again only when they (or the execution) did. */
  private readonly resultVersions = new Map<string, number>();

  constructor(o: { client: Pick<KubeClient, "list" | "watch">; namespace: string; log: Logger }) {
    const { client, namespace, log } = o;
    this.crews = new Informer({ client, log, path: resourcePath(CREWS, namespace), transform: crewForCache(log) });
    this.executions = new Informer({
      client,
      log,
      path: resourcePath(CREW_EXECUTIONS, namespace),
      transform: executionForCache(new CrewSpecSnapshots()),
    });
    this.results = new Informer({
      client,
      log,
      path: resourcePath(CREW_TASK_RESULTS, namespace),
      labelSelector: LABEL_EXECUTION,
      indexKeys: executionOf,
      transform: resultForCache,
    });
    this.executions.on((event, object) => {
      const id = object.metadata?.name;
      if (!id) return;
      if (event === "delete") this.resultVersions.delete(id);
      this.changes.notify(id);
    });
    this.results.on((_event, object) => {
      for (const id of executionOf(object)) {
        this.resultVersions.set(id, (this.resultVersions.get(id) ?? 0) + 1);
        this.changes.notify(id);
      }
    });
  }

  /** Changes of the execution's results seen so far. */
  resultsVersion(id: string): number {
    return this.resultVersions.get(id) ?? 0;
  }

  async start(): Promise<void> {
    await Promise.all([this.crews.start(), this.executions.start(), this.results.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.crews.stop(), this.executions.stop(), this.results.stop()]);
  }
}
