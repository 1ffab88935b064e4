import type { CrewSpec } from "./crew.ts";
import { isFinished, type ExecutionSpec, type ExecutionStatus } from "./execution.ts";
import { openRequests, timesSentBack } from "./human-input.ts";
import type { Decision } from "./human-input-schema.ts";

/**
 * `POST /resume` (AMP's), judged against one version of an execution: the decision to append to its spec.decisions,
 * or why there is none. Pure: the API's backends write the decision with a precondition on the version judged (a
 * resourceVersion, or a compare-and-set in memory), so of two resumes of one wait exactly one is recorded and the
 * other, judged again, finds the wait answered.
 */

export interface ResumeAsk {
  task: string;
  approve: boolean;
  feedback: string;
  by: Decision["decidedBy"];
}

export type ResumeVerdict =
  | { ok: true; decision: Decision; status: "resumed" | "retrying" | "completed"; message: string }
  | { ok: false; problem: "unknownTask" | "notWaiting" | "revisionsUsedUp"; message: string };

/** AMP's answer to a resume of an execution that waits for nothing (or for another task). */
export const NOT_WAITING = "Execution is not in pending human input state";

export function judgeResume(
  execution: { spec: ExecutionSpec; status?: ExecutionStatus | undefined },
  crew: CrewSpec,
  ask: ResumeAsk,
  now: Date,
): ResumeVerdict {
  const spec = execution.status?.crewSpec ?? crew;
  const task = spec.tasks.find((t) => t.name === ask.task);
  if (!task) return { ok: false, problem: "unknownTask", message: `The execution's crew has no task "${ask.task}"` };
  const finished = isFinished(execution.status?.phase) || execution.spec.stop;
  const request = finished
    ? undefined
    : openRequests(execution.spec, execution.status).find((r) => r.kind === "taskOutput" && r.task === ask.task);
  if (!request) return { ok: false, problem: "notWaiting", message: NOT_WAITING };
  const limit = spec.runner.humanInputMaxRetries;
  const sentBack = timesSentBack(execution.spec, ask.task);
  if (!ask.approve && sentBack >= limit) {
    return {
      ok: false,
      problem: "revisionsUsedUp",
      message:
        `Task "${ask.task}" was sent back ${sentBack} times, the most its crew allows ` +
        "(runner.humanInputMaxRetries): approve its answer (is_approve: true) or stop the execution",
    };
  }
  const decision: Decision = {
    kind: "taskOutput",
    task: ask.task,
    revision: request.revision,
    approve: ask.approve,
    feedback: ask.feedback,
    decidedBy: ask.by,
    decidedAt: now.toISOString(),
  };
  if (!ask.approve) {
    const message = `Task "${ask.task}" runs again with the feedback (revision ${sentBack + 1} of at most ${limit})`;
    return { ok: true, decision, status: "retrying", message };
  }
  // Nothing left to run once this answer is accepted: every other task succeeded and nothing else waits.
  const othersDone = (execution.status?.tasks ?? []).every((t) => t.name === ask.task || t.phase === "Succeeded");
  const othersWaiting = openRequests(execution.spec, execution.status).some((r) => r !== request);
  if (othersDone && !othersWaiting && (execution.status?.tasks?.length ?? 0) === spec.tasks.length) {
    return { ok: true, decision, status: "completed", message: `Task "${ask.task}" approved; it was the last one` };
  }
  return { ok: true, decision, status: "resumed", message: `Task "${ask.task}" approved; the execution goes on` };
}
