import type { Logger } from "../core/logger.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
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

/** A Job as the controller keeps it: its metadata and status; the pod template (most of a Job) is never read. */
export function trimJob(job: JobObject): JobObject {
  const { spec: _template, ...rest } = withoutManagedFields(job);
  return rest;
}

/** The informers, not started; `namespace` empty for all namespaces. */
export function createCaches(o: {
  client: Pick<KubeClient, "list" | "watch">;
  log: Logger;
  namespace: string;
  watchTimeoutSeconds: number;
}): Caches {
  const ns = o.namespace || undefined;
  // Every cache drops managedFields (nobody reads them; on a small object they are half its size).
  const base = {
    client: o.client,
    log: o.log,
    watchTimeoutSeconds: o.watchTimeoutSeconds,
    transform: withoutManagedFields,
  };
  const children = { labelSelector: LABEL_EXECUTION, indexKeys: byExecution };
  return {
    executions: new Informer<KubeObject>({ ...base, path: resourcePath(CREW_EXECUTIONS, ns) }),
    crews: new Informer<KubeObject>({ ...base, path: resourcePath(CREWS, ns) }),
    jobs: new Informer<JobObject>({ ...base, ...children, transform: trimJob, path: resourcePath(JOBS, ns) }),
    results: new Informer<TaskResultObject>({ ...base, ...children, path: resourcePath(CREW_TASK_RESULTS, ns) }),
  };
}

/** Every informer of the caches. */
export const informersOf = (caches: Caches) => Object.entries(caches) as [string, Informer<KubeObject>][];
