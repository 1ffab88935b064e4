import type { CrewSpec } from "../core/crew.ts";
import { successfulResult, type ObservedTask } from "../core/observed-task.ts";
import { isOwnTaskResult, type TaskResultSpec } from "../core/task-result.ts";
import { runsWhole } from "../core/whole-project.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import { LABEL_TASK } from "../kube/resources.ts";
import { revisionOf } from "../kube/task-names.ts";
import type { CachedTaskResult } from "../kube/typed-objects.ts";

/** What the controller reads of a Job: the parts of batch/v1 Job it needs. */
export interface JobObject extends KubeObject {
  spec?: { template?: unknown; backoffLimit?: number; activeDeadlineSeconds?: number };
  status?: {
    active?: number;
    /** Pods of the Job with the Ready condition (kube-controller-manager ≥ 1.24 writes it): the task's pod runs. */
    ready?: number;
    succeeded?: number;
    failed?: number;
    startTime?: string;
    completionTime?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** The run state of one task from its Job: terminal conditions first, a Job being deleted counts as ended. */
export function jobRunState(job: JobObject): NonNullable<ObservedTask["run"]> {
  const conditions = job.status?.conditions ?? [];
  const startTime = job.status?.startTime ?? job.metadata?.creationTimestamp;
  const withStart = startTime ? { startTime } : {};
  const isTrue = (type: string) => conditions.find((c) => c.type === type && c.status === "True");
  const complete = isTrue("Complete") ?? isTrue("SuccessCriteriaMet");
  if (complete) return { state: "succeeded", ...withStart };
  const failed = isTrue("Failed") ?? isTrue("FailureTarget");
  if (failed) {
    return {
      state: "failed",
      ...(failed.reason ? { reason: failed.reason } : {}),
      ...(failed.message ? { message: failed.message } : {}),
      ...withStart,
    };
  }
  if (job.metadata?.deletionTimestamp) {
    return { state: "failed", reason: "JobDeleted", message: `its Job ${job.metadata.name} was deleted`, ...withStart };
  }
  return { state: "running", ...withStart };
}

/**
 * Builds decide()'s view of the world from the caches: each task's Job (by the task label) and every result the
 * runner reported for it (a result that does not decode is no report). Failed attempts are numbered in the order
 * they were created.
 */
export function observeTasks(
  spec: CrewSpec | undefined,
  jobs: readonly JobObject[],
  results: readonly (CachedTaskResult | Undecodable)[],
): Record<string, ObservedTask> {
  const observed: Record<string, ObservedTask> = {};
  const names = new Set(spec?.tasks.map((t) => t.name) ?? []);
  const slot = (name: string) => (observed[name] ??= { results: [] });
  for (const job of jobs) {
    const name = job.metadata?.labels?.[LABEL_TASK];
    if (!name || (spec && !names.has(name))) continue;
    // A task sent back by a person has a Job per revision: its latest is the one that tells.
    const revision = revisionOf(job.metadata?.labels);
    const seen = slot(name).run;
    if (seen && (seen.revision ?? 0) >= revision) continue;
    slot(name).run = { ...jobRunState(job), ...(revision ? { revision } : {}) };
  }
  const sorted = results
    .filter((r): r is CachedTaskResult => !isUndecodable(r))
    .sort(
      (a, b) =>
        (a.metadata?.creationTimestamp ?? "").localeCompare(b.metadata?.creationTimestamp ?? "") ||
        (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
    );
  const attempts = new Map<string, number>();
  for (const object of sorted) {
    const result: TaskResultSpec = object.spec;
    if (spec && !isOwnTaskResult(spec, result)) continue;
    if (result.error !== undefined) {
      const key = `${result.taskName}:${result.revision ?? 0}`;
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      slot(result.taskName).results.push({ ...result, attempt: Math.max(result.attempt, n) });
    } else {
      slot(result.taskName).results.push(result);
    }
  }
  // A task whose runner reported success is done even while its pod is still exiting (the Job not yet Complete):
  // it must not look like a stray run to stop. Not so a whole project's Job (core/whole-project.ts): observed as its
  // first task's, it runs the tasks after that one's success.
  if (spec && runsWhole(spec)) return observed;
  for (const task of Object.values(observed)) {
    if (task.run?.state === "running" && successfulResult(task, task.run.revision ?? 0)) {
      task.run = { ...task.run, state: "succeeded" };
    }
  }
  return observed;
}
