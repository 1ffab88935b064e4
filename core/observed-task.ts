import type { TaskResultSpec } from "./task-result.ts";

/** What the world shows of one task: its run (a Job, or a local child process) and what its runner reported. */
export interface ObservedTask {
  run?: {
    state: "running" | "succeeded" | "failed";
    /** "DeadlineExceeded" when the task ran out of time; other reasons are informative. */
    reason?: string;
    message?: string;
    startTime?: string;
  };
  /** Results reported by the runner, one per attempt. */
  results: TaskResultSpec[];
}

/** The attempt whose runner reported an output and no error, if any. */
export function successfulResult(task: ObservedTask | undefined): TaskResultSpec | undefined {
  return task?.results.find((r) => r.output !== undefined && r.error === undefined);
}
