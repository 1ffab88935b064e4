import type { TaskResultSpec } from "./task-result.ts";

/** What the world shows of one task: its run (a Job, or a local child process) and what its runner reported. */
export interface ObservedTask {
  /** The run of the task's latest revision seen (a humanInput task sent back runs again: one run per revision). */
  run?: {
    state: "running" | "succeeded" | "failed";
    /** "DeadlineExceeded" when the task ran out of time; other reasons are informative. */
    reason?: string;
    message?: string;
    startTime?: string;
    /** Which revision of the task the run gives (absent: 0, its first answer). */
    revision?: number;
  };
  /** Results reported by the runner, one per attempt (of every revision). */
  results: TaskResultSpec[];
}

/**
 * The attempt whose runner reported an output and no error: of `revision` when given, else of the latest revision
 * that has one (the answer a person approved, once the tasks after it run).
 */
export function successfulResult(task: ObservedTask | undefined, revision?: number): TaskResultSpec | undefined {
  const succeeded = (task?.results ?? []).filter((r) => r.output !== undefined && r.error === undefined);
  if (revision !== undefined) return succeeded.find((r) => (r.revision ?? 0) === revision);
  return succeeded.reduce<TaskResultSpec | undefined>(
    (latest, r) => (!latest || (r.revision ?? 0) > (latest.revision ?? 0) ? r : latest),
    undefined,
  );
}

/** The attempt of `revision` whose loop parked on held tool calls (no output, no error), if it did. */
export function parkedResult(task: ObservedTask | undefined, revision: number): TaskResultSpec | undefined {
  return (task?.results ?? []).find(
    (r) => r.parked !== undefined && r.error === undefined && r.output === undefined && (r.revision ?? 0) === revision,
  );
}
