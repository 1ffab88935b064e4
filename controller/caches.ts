import type { Logger } from "../core/logger.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { cacheKey, Informer, withoutManagedFields } from "../kube/informer.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, CREWS, JOBS, LABEL_EXECUTION, resourcePath } from "../kube/resources.ts";
import type { JobObject, TaskResultObject } from "./observe.ts";

/** The controller's view of the cluster: one informer per kind it reads. Jobs and results are indexed by execution. */
export interface Caches {
  executions: Informer<KubeObject>;
  crews: Informer<KubeObject>;
  jobs: Informer<JobObject>;
  results: Informer<TaskResultObject>;
}

/** The key of the execution a child (Job, result) belongs to, from its execution label. */
export function byExecution(o: KubeObject): string[] {
  const execution = o.metadata?.labels?.[LABEL_EXECUTION];
  return execution ? [cacheKey(o.metadata!.namespace!, execution)] : [];
}

/**
 * The metadata the controller reads of a child (Job, result): its identity, labels and timestamps. Not its owner
 * references, finalizers, annotations or managedFields: with 10,000 executions and their children in the caches,
 * what nobody reads is most of the controller's memory.
 */
function childMetadata(object: KubeObject): KubeObject["metadata"] {
  const m = object.metadata ?? {};
  return {
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(m.labels ? { labels: m.labels } : {}),
  };
}

/**
 * A Job as the controller keeps it: its metadata and the status fields of JobObject (what jobRunState reads); the
 * pod template (most of a Job) and the conditions' timestamps are never read.
 */
export function trimJob(job: JobObject): JobObject {
  const status = job.status;
  const kept = status && {
    ...(status.active !== undefined ? { active: status.active } : {}),
    ...(status.succeeded !== undefined ? { succeeded: status.succeeded } : {}),
    ...(status.failed !== undefined ? { failed: status.failed } : {}),
    ...(status.startTime !== undefined ? { startTime: status.startTime } : {}),
    ...(status.completionTime !== undefined ? { completionTime: status.completionTime } : {}),
    ...(status.conditions
      ? {
          conditions: status.conditions.map(({ type, status, reason, message }) => ({
            type,
            status,
            ...(reason !== undefined ? { reason } : {}),
            ...(message !== undefined ? { message } : {}),
          })),
        }
      : {}),
  };
  return { metadata: childMetadata(job), ...(kept ? { status: kept } : {}) };
}

/** A CrewTaskResult as the controller keeps it: its metadata (childMetadata) and the runner's report (spec). */
export function trimResult(result: TaskResultObject): TaskResultObject {
  return { metadata: childMetadata(result), spec: result.spec };
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * A CrewExecution as the controller keeps it: all of it but managedFields and kubectl's last-applied copy, with its
 * status's crew snapshot shared with every other execution of the same crew version (`snapshots`).
 */
export function executionForCache(snapshots: CrewSpecSnapshots): (execution: KubeObject) => KubeObject {
  return (raw) => {
    const execution = withoutManagedFields(raw);
    const metadata = execution.metadata;
    const status = execution.status as { crewSpec?: unknown } | undefined;
    const annotations = metadata?.annotations;
    const trimmedAnnotations =
      annotations && LAST_APPLIED in annotations
        ? Object.fromEntries(Object.entries(annotations).filter(([name]) => name !== LAST_APPLIED))
        : annotations;
    return {
      ...execution,
      ...(metadata && trimmedAnnotations !== annotations
        ? { metadata: { ...metadata, annotations: trimmedAnnotations } }
        : {}),
      ...(status?.crewSpec !== undefined ? { status: { ...status, crewSpec: snapshots.shared(status.crewSpec) } } : {}),
    };
  };
}

/** The informers, not started; `namespace` empty for all namespaces. */
export function createCaches(o: {
  client: Pick<KubeClient, "list" | "watch">;
  log: Logger;
  namespace: string;
  watchTimeoutSeconds: number;
}): Caches {
  const ns = o.namespace || undefined;
  // Every cache drops managedFields (nobody reads them; on a small object they are half its size); the children keep
  // only what the controller reads, executions share their crew snapshots.
  const base = {
    client: o.client,
    log: o.log,
    watchTimeoutSeconds: o.watchTimeoutSeconds,
    transform: withoutManagedFields,
  };
  const children = { labelSelector: LABEL_EXECUTION, indexKeys: byExecution };
  return {
    executions: new Informer<KubeObject>({
      ...base,
      transform: executionForCache(new CrewSpecSnapshots()),
      path: resourcePath(CREW_EXECUTIONS, ns),
    }),
    crews: new Informer<KubeObject>({ ...base, path: resourcePath(CREWS, ns) }),
    jobs: new Informer<JobObject>({ ...base, ...children, transform: trimJob, path: resourcePath(JOBS, ns) }),
    results: new Informer<TaskResultObject>({
      ...base,
      ...children,
      transform: trimResult,
      path: resourcePath(CREW_TASK_RESULTS, ns),
    }),
  };
}

/** Every informer of the caches. */
export const informersOf = (caches: Caches) => Object.entries(caches) as [string, Informer<KubeObject>][];
