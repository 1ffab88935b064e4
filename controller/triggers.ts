import { isFinished, type ExecutionPhase } from "../core/execution.ts";
import type { KubeObject } from "../kube/client.ts";
import { cacheKey, objectKey, type Informer } from "../kube/informer.ts";
import { byExecution, type Caches } from "./caches.ts";
import type { KeySink } from "./shard-ownership.ts";

/**
 * Which keys a change in the caches puts in the work queues: an execution's own key for every change of it or of one
 * of its children (a child's change in the urgent lane); a crew's key in the crew queue; and a crew that appears or changes puts in the executions that
 * have not taken their snapshot of it yet.
 */
export function queueOnChange(caches: Caches, queues: { executions: KeySink; crews: KeySink }): void {
  caches.executions.on((_event, o) => queues.executions.add(objectKey(o)));
  for (const informer of [caches.jobs, caches.results] as Informer<KubeObject>[]) {
    // A child changed: work in progress (a task ended, a result arrived) goes before kickoffs still waiting.
    informer.on((_event, o) => byExecution(o).forEach((k) => queues.executions.addUrgent(k)));
  }
  caches.crews.on((event, crew) => {
    if (event !== "delete") queues.crews.add(objectKey(crew));
    for (const e of caches.executions.list(crew.metadata?.namespace)) {
      if (waitsFor(e, crew)) queues.executions.add(cacheKey(e.metadata!.namespace!, e.metadata!.name!));
    }
  });
}

/** An unfinished execution of the crew that has not taken its snapshot of the crew's spec yet. */
function waitsFor(execution: KubeObject, crew: KubeObject): boolean {
  const spec = execution.spec as { crewRef?: { name?: string } } | undefined;
  const status = execution.status as { crewSpec?: unknown; phase?: ExecutionPhase } | undefined;
  return spec?.crewRef?.name === crew.metadata?.name && !status?.crewSpec && !isFinished(status?.phase);
}
