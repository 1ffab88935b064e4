import type { CrewSpec } from "./crew.ts";
import { isFinished, type ExecutionSpec, type ExecutionStatus } from "./execution.ts";
import { openRequests, toolCallDecisions, toolCallRequests } from "./human-input.ts";
import type { Decision } from "./human-input-schema.ts";
import { NOT_WAITING } from "./resume.ts";
import { mayDecideToolCall, whoMayDecideToolCall } from "./tool-approval.ts";

/**
 * `POST /resume` with a `tool_call_id`: a person's decision on a tool call the crew's toolPolicy.requireApproval held
 * (issue 32 item 4), judged against one version of the execution. Only the user whose connected account the call
 * would act with — or, for a call that acts with no one's account, an org admin (an org token, an admin's console
 * session) — may decide; anyone else who sees the call is told who may (the API's 403; one who may not see the
 * execution at all is told it is not there before it gets here). Once every held call of the run has a decision the
 * task runs again from its parked conversation (core/assignment.ts).
 */

export interface ToolCallAsk {
  task: string;
  toolCallId: string;
  approve: boolean;
  feedback: string;
  principal: { kind: "org" | "user"; subject: string; user?: string | undefined };
}

export type ToolCallVerdict =
  | { ok: true; decision: Decision; status: "resumed"; message: string }
  | { ok: false; problem: "unknownTask" | "notDecider" | "notWaiting" | "decided"; message: string };

export function judgeToolCall(
  execution: { spec: ExecutionSpec; status?: ExecutionStatus | undefined },
  crew: CrewSpec,
  ask: ToolCallAsk,
  now: Date,
): ToolCallVerdict {
  const spec = execution.status?.crewSpec ?? crew;
  if (!spec.tasks.some((t) => t.name === ask.task)) {
    return { ok: false, problem: "unknownTask", message: `The execution's crew has no task "${ask.task}"` };
  }
  const held = (execution.status?.inputRequests ?? []).filter(
    (r) => r.kind === "toolCall" && r.task === ask.task && r.toolCall?.id === ask.toolCallId,
  );
  const request = held.at(-1);
  if (request && !mayDecideToolCall(ask.principal, request.toolCall?.actsAs)) {
    const tool = request.toolCall?.tool ?? ask.toolCallId;
    return { ok: false, problem: "notDecider", message: whoMayDecideToolCall(tool, request.toolCall?.actsAs) };
  }
  const finished = isFinished(execution.status?.phase) || execution.spec.stop;
  const open = !finished && request && openRequests(execution.spec, execution.status).includes(request);
  if (!request || !open) {
    const earlier = request && toolCallDecisions(execution.spec, ask.task, request.revision);
    const decided = earlier?.find((d) => d.toolCallId === ask.toolCallId);
    if (decided) {
      const verdict = decided.approve ? "approved" : "denied";
      const message = `Tool call "${ask.toolCallId}" of task "${ask.task}" was already ${verdict} by ${decided.decidedBy.subject}`;
      return { ok: false, problem: "decided", message };
    }
    return { ok: false, problem: "notWaiting", message: NOT_WAITING };
  }
  const decision: Decision = {
    kind: "toolCall",
    task: ask.task,
    revision: request.revision,
    toolCallId: ask.toolCallId,
    approve: ask.approve,
    feedback: ask.feedback,
    decidedBy: { kind: ask.principal.kind, subject: ask.principal.subject },
    decidedAt: now.toISOString(),
  };
  const decidedBefore = toolCallDecisions(execution.spec, ask.task, request.revision).length;
  const left = toolCallRequests(execution.status, ask.task, request.revision).length - decidedBefore - 1;
  const what = `Tool call "${request.toolCall?.tool ?? ask.toolCallId}" ${ask.approve ? "approved" : "denied"}`;
  const message =
    left > 0
      ? `${what}; ${left} more held call${left === 1 ? "" : "s"} of task "${ask.task}" wait${left === 1 ? "s" : ""}`
      : `${what}; task "${ask.task}" goes on`;
  return { ok: true, decision, status: "resumed", message };
}
