import { isFinished } from "../core/execution.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { cacheKey, objectKey, type InformerEvent } from "../kube/runtime/informer.ts";
import { LABEL_TASK } from "../kube/resources.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedExecution } from "../kube/typed-objects.ts";
import { byExecution, type Caches } from "./caches.ts";
import { jobRunState, type JobObject } from "./observe.ts";
import type { KeySink } from "../kube/runtime/shard-ownership.ts";

/**
 * Which keys a change in the caches puts in the work queues: an execution's own key for every change of it or of one
 * of its children (a child's change in the urgent lane); a crew's key in the crew queue; and a crew that appears or
 * changes puts in the executions that have not taken their snapshot of it yet.
 *
 * Changes nothing reads are not queued (as controller-runtime's predicates): a watch event that brings back the
 * version the cache already holds (the controller's own write, put in the cache from the apiserver's answer), and a
 * Job's status changes that leave its run where it was (active, ready, uncounted pods: about four per task, none of
 * which moves an execution). At thousands of executions a minute each such event was a reconcile doing nothing.
 * A Job's `ready` does matter to the limit on tasks starting at once: start-limit.ts listens to the Job cache for it
 * itself, and queues only the execution whose turn it is (not the Job's own).
 */
export function queueOnChange(caches: Caches, queues: { executions: KeySink; crews: KeySink }): void {
  caches.executions.on((event, o, previous) => {
    if (changed(event, o, previous)) queues.executions.add(objectKey(o));
  });
  // A child changed: work in progress (a task ended, a result arrived) goes before kickoffs still waiting.
  caches.jobs.on((event, job, previous) => {
    if (!changed(event, job, previous) || (event === "update" && previous && !runChanged(previous, job))) return;
    byExecution(job).forEach((k) => queues.executions.addUrgent(k));
  });
  caches.results.on((event, result, previous) => {
    if (changed(event, result, previous)) byExecution(result).forEach((k) => queues.executions.addUrgent(k));
  });
  caches.crews.on((event, crew) => {
    if (event !== "delete") queues.crews.add(objectKey(crew));
    for (const e of caches.executions.list(crew.metadata?.namespace)) {
      if (waitsFor(e, crew)) queues.executions.add(cacheKey(e.metadata!.namespace!, e.metadata!.name!));
    }
  });
}

/** False for an update that brings the very version the cache held (same resourceVersion): nothing changed. */
export function changed(event: InformerEvent, object: KubeObject, previous: KubeObject | undefined): boolean {
  if (event !== "update" || !previous) return true;
  const rv = object.metadata?.resourceVersion;
  return !rv || rv !== previous.metadata?.resourceVersion;
}

/**
 * Whether a Job's change can matter to its execution: what the reconciler reads of a Job is its task (label), its run
 * state (ended or not, how, why: `jobRunState`) and whether it is being deleted.
 */
export function runChanged(previous: JobObject, job: JobObject): boolean {
  const view = (j: JobObject) => {
    const { state, reason, message } = jobRunState(j);
    return JSON.stringify([
      j.metadata?.labels?.[LABEL_TASK],
      byExecution(j),
      state,
      reason,
      message,
      !!j.metadata?.deletionTimestamp,
    ]);
  };
  return view(previous) !== view(job);
}

/** An unfinished execution of the crew that has not taken its snapshot of the crew's spec yet. */
function waitsFor(execution: CachedExecution | Undecodable, crew: KubeObject): boolean {
  if (isUndecodable(execution)) return false;
  const { spec, status } = execution;
  return spec.crewRef.name === crew.metadata?.name && !status?.crewSpec && !isFinished(status?.phase);
}
