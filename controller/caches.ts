import type { Logger } from "../core/logger.ts";
import type { KubeClient, KubeObject } from "../kube/runtime/client.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { cacheKey, Informer, withoutManagedFields } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import {
  decodeCrew,
  decodeTaskResult,
  executionDecoder,
  type CachedCrew,
  type CachedExecution,
  type CachedTaskResult,
} from "../kube/typed-objects.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  JOBS,
  LABEL_EXECUTION,
  LABEL_TASK,
  resourcePath,
} from "../kube/resources.ts";
import { StringPool } from "../kube/runtime/string-pool.ts";
import type { JobObject } from "./observe.ts";

/**
 * The controller's view of the cluster: one informer per kind it reads, each object decoded once as it enters
 * (kube/typed-objects.ts; Jobs trimmed to what is read of them). Jobs and results are indexed by execution.
 */
export interface Caches {
  executions: Informer<CachedExecution | Undecodable>;
  crews: Informer<CachedCrew | Undecodable>;
  jobs: Informer<JobObject>;
  results: Informer<CachedTaskResult | Undecodable>;
}

/** The key of the execution a child (Job, result) belongs to, from its execution label. */
export function byExecution(o: KubeObject): string[] {
  const execution = o.metadata?.labels?.[LABEL_EXECUTION];
  return execution ? [cacheKey(o.metadata!.namespace!, execution)] : [];
}

/** What a transform does with a string it keeps: the pool's copy (createCaches), or the string itself. */
type Keep = (s: string) => string;
const asIs: Keep = (s) => s;

/**
 * The metadata the controller reads of a child (Job, result): its name, namespace, resourceVersion, timestamps, and of
 * its labels those in `labels` (its execution, for the index; a Job's task). Not its uid, owner references,
 * finalizers, annotations or managedFields: with 10,000 executions and their children in the caches, what nobody
 * reads is most of the controller's memory.
 */
function childMetadata(object: KubeObject, labels: readonly string[], keep: Keep): KubeObject["metadata"] {
  const m = object.metadata ?? {};
  const kept: Record<string, string> = {};
  for (const label of labels) {
    const value = m.labels?.[label];
    if (value !== undefined) kept[label] = keep(value);
  }
  // One literal with every field (absent ones undefined): an object built up field by field takes a second block
  // for its fields past the fourth.
  return {
    name: m.name,
    namespace: m.namespace === undefined ? undefined : keep(m.namespace),
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp === undefined ? undefined : keep(m.creationTimestamp),
    deletionTimestamp: m.deletionTimestamp === undefined ? undefined : keep(m.deletionTimestamp),
    labels: kept,
  };
}

const JOB_LABELS = [LABEL_EXECUTION, LABEL_TASK] as const;
const RESULT_LABELS = [LABEL_EXECUTION] as const;

/**
 * A Job as the controller keeps it: what jobRunState(), the triggers and the start limit read — its metadata
 * (childMetadata), start time, `ready` (its pod runs: the task's start is over, start-limit.ts) and the one condition
 * that ended it, as jobRunState() picks it (of a success only the fact, of a failure its reason and message). The pod
 * template (most of a Job), its other counts of pods, the other conditions and their timestamps are never read.
 */
export function trimJob(job: KubeObject & JobObject, keep: Keep = asIs): JobObject {
  const status = job.status;
  const isTrue = (type: string) => status?.conditions?.find((c) => c.type === type && c.status === "True");
  const succeeded = isTrue("Complete") ?? isTrue("SuccessCriteriaMet");
  const failed = succeeded ? undefined : (isTrue("Failed") ?? isTrue("FailureTarget"));
  const end = succeeded
    ? { type: keep(succeeded.type), status: keep(succeeded.status) }
    : failed && {
        type: keep(failed.type),
        status: keep(failed.status),
        ...(failed.reason !== undefined ? { reason: keep(failed.reason) } : {}),
        ...(failed.message !== undefined ? { message: keep(failed.message) } : {}),
      };
  const kept = status && {
    ...(status.startTime !== undefined ? { startTime: keep(status.startTime) } : {}),
    ...(status.ready ? { ready: status.ready } : {}),
    ...(end ? { conditions: [end] } : {}),
  };
  return { metadata: childMetadata(job, JOB_LABELS, keep), ...(kept ? { status: kept } : {}) };
}

/**
 * A CrewTaskResult as the controller keeps it: its metadata (childMetadata) and the runner's report (spec), decoded
 * (kube/typed-objects.ts), with the fields that recur across results (its execution, task, agent, model) kept once.
 */
export function resultForCache(result: KubeObject, keep: Keep = asIs): CachedTaskResult | Undecodable {
  const decoded = decodeTaskResult({ metadata: childMetadata(result, RESULT_LABELS, keep), spec: result.spec });
  if (keep !== asIs && !isUndecodable(decoded)) {
    // The decoded spec is this cache's own object.
    const spec = decoded.spec;
    spec.executionRef.name = keep(spec.executionRef.name);
    spec.taskName = keep(spec.taskName);
    spec.agent = keep(spec.agent);
    if (spec.model !== undefined) spec.model = keep(spec.model);
  }
  return decoded;
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** Strings of an execution's status (not its crew snapshot) kept once: longer ones are a run's own (an error). */
const POOLED_LENGTH = 256;

/**
 * Replaces the short strings in `value` by `keep`'s equal copies, in place: no reader can tell an equal string apart,
 * and the objects keep their shape (a copy built up field by field takes more memory than the object parsed). The
 * crew snapshot is left to CrewSpecSnapshots.
 */
function keepStrings(value: object, keep: Keep): void {
  const entries = value as Record<string, unknown>;
  for (const k of Object.keys(entries)) {
    const v = entries[k];
    if (typeof v === "string") {
      if (v.length <= POOLED_LENGTH) entries[k] = keep(v);
    } else if (v && typeof v === "object" && k !== "crewSpec") {
      keepStrings(v, keep);
    }
  }
}

/**
 * A CrewExecution as the controller keeps it: all of it but managedFields and kubectl's last-applied copy, decoded
 * (kube/typed-objects.ts), with its status's crew snapshot decoded once and shared with every other execution of the
 * same crew version (`snapshots`), and its namespace, timestamps and status strings (phases, task names, reasons)
 * kept once (`keep`).
 */
export function executionForCache(
  snapshots: CrewSpecSnapshots,
  keep: Keep = asIs,
): (execution: KubeObject) => CachedExecution | Undecodable {
  const decode = executionDecoder(snapshots);
  return (raw) => {
    const execution = withoutManagedFields(raw);
    const metadata = execution.metadata;
    const status = execution.status as object | undefined;
    const annotations = metadata?.annotations;
    const trimmedAnnotations =
      annotations && LAST_APPLIED in annotations
        ? Object.fromEntries(Object.entries(annotations).filter(([name]) => name !== LAST_APPLIED))
        : annotations;
    if (status && keep !== asIs) keepStrings(status, keep);
    if (metadata?.namespace !== undefined) metadata.namespace = keep(metadata.namespace);
    if (metadata?.creationTimestamp !== undefined) metadata.creationTimestamp = keep(metadata.creationTimestamp);
    return decode(
      metadata && trimmedAnnotations !== annotations
        ? { ...execution, metadata: { ...metadata, annotations: trimmedAnnotations } }
        : execution,
    );
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
  // only what the controller reads, executions share their crew snapshots. One pool for the strings all four share:
  // an execution's key is also its children's index key, its name their label, its namespace everyone's.
  const strings = new StringPool(8192);
  const keep = strings.intern;
  const base = {
    client: o.client,
    log: o.log,
    watchTimeoutSeconds: o.watchTimeoutSeconds,
    keys: keep,
  };
  const children = { labelSelector: LABEL_EXECUTION, indexKeys: byExecution };
  return {
    executions: new Informer<CachedExecution | Undecodable>({
      ...base,
      transform: executionForCache(new CrewSpecSnapshots(), keep),
      path: resourcePath(CREW_EXECUTIONS, ns),
    }),
    crews: new Informer<CachedCrew | Undecodable>({
      ...base,
      transform: (crew) => decodeCrew(withoutManagedFields(crew)),
      path: resourcePath(CREWS, ns),
    }),
    jobs: new Informer<JobObject>({
      ...base,
      ...children,
      transform: (job) => trimJob(job, keep),
      path: resourcePath(JOBS, ns),
    }),
    results: new Informer<CachedTaskResult | Undecodable>({
      ...base,
      ...children,
      transform: (result) => resultForCache(result, keep),
      path: resourcePath(CREW_TASK_RESULTS, ns),
    }),
  };
}

/** Every informer of the caches, by name. */
export const informersOf = (caches: Caches) =>
  Object.entries(caches) as [string, Pick<Informer<KubeObject>, "start" | "stop" | "hasSynced" | "lastActivity">][];
