import {
  LABEL_CREW,
  LABEL_EXECUTION,
  LABEL_MANAGED_BY,
  LABEL_TASK,
  LABEL_TASK_INDEX,
  LABEL_TASK_REVISION,
  MANAGED_BY,
} from "./resources.ts";

/**
 * The contract between the controller, which creates a task's Job and ConfigMaps, and the runner in the Job's pod,
 * which reads them and creates the task's CrewTaskResult: names, labels and the files of the mounted ConfigMaps.
 * Deterministic names are what make reconciling idempotent: a restart or a stale cache can never make a second one.
 */

/** Where the runner finds its assignment inside the pod (the task's ConfigMap, mounted). */
export const ASSIGNMENT_DIR = "/etc/kubecrew/assignment";
export const ASSIGNMENT_FILE = "assignment.json";
/** Where context outputs too large for the assignment's ConfigMap are mounted, one directory per context entry. */
export const CONTEXT_DIR = "/etc/kubecrew/context";
/** In the assignment's ConfigMap when outputs were moved out: `{ "<context index>": "<file path in the pod>" }`. */
export const CONTEXT_FILES = "context-files.json";

/**
 * The one name of a task's Job and of its assignment's ConfigMap: `<execution>-<index>`, and for a revision of a
 * humanInput task (its answer sent back by a person) `<execution>-<index>-r<revision>`, a run of its own.
 */
export function taskJobName(execution: string, index: number, revision = 0): string {
  const suffix = revision > 0 ? `${index}-r${revision}` : String(index);
  const name = `${execution}-${suffix}`;
  if (name.length <= 63) return name;
  // kickoff ids are UUIDs (36 characters); a longer hand-written name keeps a readable prefix and a stable hash.
  if (revision === 0) return `${execution.slice(0, 50)}-${shortHash(execution)}-${index}`.slice(0, 63);
  return `${execution.slice(0, 63 - 10 - suffix.length)}-${shortHash(execution)}-${suffix}`;
}

/**
 * The one name of a whole project's Job and of its assignment's ConfigMap (spec.runner.crew: one run for every task of
 * the execution): `<execution>-p`. No task's Job can have it (theirs end in a digit), so the runner results policy
 * (controller/manifests/runner-results-policy.yaml) tells a project's pod (`<execution>-p-<5 characters>`) from any
 * task's by its name alone, and lets it write the results of every task of its own execution. Up to 55 characters of
 * execution the pods' names keep the Job's whole (the Job controller cuts a longer one); a longer name gets a hash,
 * whose pods the policy refuses, as it refuses long-named tasks' (kickoff ids are UUIDs, 36 characters).
 */
export function projectJobName(execution: string): string {
  if (execution.length <= 55) return `${execution}-p`;
  return `${execution.slice(0, 44)}-${shortHash(execution)}-p`;
}

/** The Job (and assignment ConfigMap) of a run: the project's when it runs a whole project, else its task's. */
export function runJobName(execution: string, run: { task: { index: number; revision?: number }; project?: unknown }) {
  return run.project ? projectJobName(execution) : taskJobName(execution, run.task.index, run.task.revision ?? 0);
}

/** The ConfigMap holding context entry `context` of task `index`, moved out of the assignment for its size. */
export function contextConfigMapName(execution: string, index: number, context: number, revision = 0): string {
  return `${taskJobName(execution, index, revision)}-c${context}`;
}

/**
 * The name of a task's CrewTaskResult: the task's Job name when it succeeded (one per task), one per pod (attempt)
 * when it failed: `<pod>-failed`, or generated from `<job>-failed-` when the pod's name is unknown.
 */
export function taskResultName(
  execution: string,
  index: number,
  failed: boolean,
  podName: string | undefined,
  revision = 0,
): { name?: string; generateName?: string } {
  const base = taskJobName(execution, index, revision);
  if (!failed) return { name: base };
  return podName ? { name: `${podName}-failed` } : { generateName: `${base}-failed-` };
}

/** Labels on every child of an execution (Jobs, ConfigMaps, results): selectors for the informers and for cleanup. */
export function taskLabels(task: { execution: string; crew: string; name: string; index: number; revision?: number }) {
  return {
    [LABEL_EXECUTION]: task.execution,
    [LABEL_TASK]: task.name,
    [LABEL_TASK_INDEX]: String(task.index),
    ...(task.revision ? { [LABEL_TASK_REVISION]: String(task.revision) } : {}),
    [LABEL_CREW]: task.crew,
    [LABEL_MANAGED_BY]: MANAGED_BY,
  };
}

/** The revision a child's labels name (0: its task's first answer). */
export function revisionOf(labels: Record<string, string> | undefined): number {
  const revision = Number(labels?.[LABEL_TASK_REVISION] ?? 0);
  return Number.isInteger(revision) && revision > 0 ? revision : 0;
}

function shortHash(s: string): string {
  let h = 2166136261;
  for (const c of s) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h.toString(16).padStart(8, "0").slice(0, 8);
}
