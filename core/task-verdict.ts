import type { CrewSpec, Task } from "./crew.ts";
import type { DecideInput } from "./decision.ts";
import type { ExecutionSpec, ExecutionStatus } from "./execution.ts";
import { decisionOn, requestFor, taskRevision, toolCallRequests } from "./human-input.ts";
import { parkedResult, successfulResult, type ObservedTask } from "./observed-task.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * How decide() (decide.ts) judges one task from what the world shows of it, for its current revision (human-input.ts):
 * succeeded, its answer (or a tool call it holds) waiting for a person, failed, running, or not started.
 */

function lastFailure(task: ObservedTask | undefined, revision: number): TaskResultSpec | undefined {
  return task?.results
    .filter((r) => r.error !== undefined && (r.revision ?? 0) === revision)
    .sort((a, b) => a.attempt - b.attempt)
    .at(-1);
}

export type FailureReason = "TaskFailed" | "TaskTimedOut" | "HumanInputTimedOut";

export type TaskVerdict =
  | { state: "succeeded"; result: TaskResultSpec }
  | { state: "waiting"; result: TaskResultSpec; requestedAt: string; /** held tool calls */ held?: true }
  | { state: "failed"; message: string; reason: FailureReason }
  | { state: "running"; startTime: string }
  | { state: "absent" };

/** The run of the task's current revision: a run of an answer sent back is over. */
export function currentRun(task: ObservedTask | undefined, revision: number) {
  return task?.run && (task.run.revision ?? 0) === revision ? task.run : undefined;
}

export function judgeTask(
  spec: CrewSpec,
  task: Task,
  execution: { spec: ExecutionSpec; status?: ExecutionStatus | undefined },
  observed: ObservedTask | undefined,
  now: Date,
): TaskVerdict {
  const { name } = task;
  const known = execution.status && knownTask(execution.status, name);
  const revision = taskRevision(execution, name);
  const success = successfulResult(observed, revision);
  if (success) {
    if (!task.humanInput || decisionOn(execution.spec, name, revision)?.approve)
      return { state: "succeeded", result: success };
    const requestedAt = requestFor(execution.status, name, revision)?.requestedAt ?? now.toISOString();
    return { state: "waiting", result: success, requestedAt };
  }
  const parked = parkedResult(observed, revision);
  if (parked) {
    const requestedAt = toolCallRequests(execution.status, name, revision)[0]?.requestedAt ?? now.toISOString();
    return { state: "waiting", result: parked, requestedAt, held: true };
  }
  const run = currentRun(observed, revision);
  if (run?.state === "failed") {
    if (run.reason === "DeadlineExceeded") {
      return { state: "failed", reason: "TaskTimedOut", message: timedOut(name, spec) };
    }
    const why = lastFailure(observed, revision)?.error ?? run.message ?? "its run failed without a message";
    return { state: "failed", reason: "TaskFailed", message: `Task "${name}" failed: ${why}` };
  }
  // A run that ended well but whose result is not visible yet (a cache lagging) counts as running, deadline and all.
  if (run) return { state: "running", startTime: known?.startTime ?? run.startTime ?? now.toISOString() };
  // The status records the start, so the run was created (see Decision): a cache that does not show it yet lags.
  if (known?.phase === "Running" && (known.revision ?? 0) === revision && known.startTime) {
    return { state: "running", startTime: known.startTime };
  }
  return { state: "absent" };
}

export const timedOut = (name: string, spec: CrewSpec) =>
  `Task "${name}" timed out after ${spec.runner.taskTimeoutSeconds}s`;
/**
 * The error of a wait nobody answered in time: an answer waiting for approval, or (`heldTools`) the tool calls the
 * task's run holds, named as toolPolicy.requireApproval names them, so whoever reads the error knows what was asked.
 */
export const unanswered = (name: string, spec: CrewSpec, heldTools: readonly string[] = []) => {
  const what = heldTools.length
    ? `for a person to decide its call${heldTools.length > 1 ? "s" : ""} of ${[...new Set(heldTools)].join(", ")}`
    : "for human input";
  return (
    `Task "${name}" waited ${spec.runner.humanInputTimeoutSeconds}s ${what} and nobody answered ` +
    "(runner.humanInputTimeoutSeconds)"
  );
};

export const knownTask = (status: ExecutionStatus, name: string) => status.tasks?.find((t) => t.name === name);

/**
 * Tasks whose run (of their current revision) may still be going: observed running, or recorded as running (its run
 * not visible yet).
 */
export function runningIndexes(input: DecideInput, spec: CrewSpec): number[] {
  const recorded = input.execution.status?.tasks ?? [];
  return spec.tasks.flatMap((t, i) => {
    const revision = taskRevision(input.execution, t.name);
    const observed = input.observed[t.name];
    if (successfulResult(observed, revision) || parkedResult(observed, revision)) return [];
    const run = currentRun(observed, revision);
    if (run?.state === "running") return [i];
    const known = recorded.find((r) => r.name === t.name);
    if (!run && known?.phase === "Running" && (known.revision ?? 0) === revision) return [i];
    return [];
  });
}
