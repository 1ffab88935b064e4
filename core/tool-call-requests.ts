import type { ExecutionSpec, ExecutionStatus } from "./execution.ts";
import { openRequests, toolCallRequests } from "./human-input.ts";
import type { InputRequest } from "./human-input-schema.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * The requests decide() records for a run parked on held tool calls (core/parked-loop.ts): one per held call, all at
 * once, with what people are shown of it and whose account it would act with (an app action acts as the execution's
 * user: only they may decide on it, core/tool-approval.ts). None when the run's calls were asked about already.
 */
export function heldCallRequests(
  parked: TaskResultSpec,
  task: string,
  revision: number,
  execution: { spec: Pick<ExecutionSpec, "requestedBy">; status?: Pick<ExecutionStatus, "inputRequests"> },
  requestedAt: string,
): InputRequest[] {
  if (!parked.parked || toolCallRequests(execution.status, task, revision).length > 0) return [];
  const user = execution.spec.requestedBy?.user;
  return parked.parked.held.map((call) => ({
    kind: "toolCall",
    task,
    revision,
    requestedAt,
    toolCall: {
      id: call.toolCallId,
      tool: call.tool,
      arguments: call.shownArguments,
      ...(call.appAction && user ? { actsAs: user } : {}),
    },
  }));
}

/** The tools of the calls run `revision` of task `task` holds that nobody decided on yet, as requireApproval names them. */
export function undecidedHeldTools(
  execution: { spec: Pick<ExecutionSpec, "decisions">; status?: Pick<ExecutionStatus, "inputRequests"> | undefined },
  task: string,
  revision: number,
): string[] {
  return openRequests(execution.spec, execution.status)
    .filter((r) => r.kind === "toolCall" && r.task === task && r.revision === revision)
    .flatMap((r) => (r.toolCall ? [r.toolCall.tool] : []));
}

/** The held calls an execution waits on, as `/status` shows them (snake_case, like the rest of the body). */
export function pendingToolCalls(requests: readonly InputRequest[]) {
  return requests.flatMap((r) =>
    r.kind === "toolCall" && r.toolCall
      ? [
          {
            task_id: r.task,
            tool_call_id: r.toolCall.id,
            tool: r.toolCall.tool,
            arguments: r.toolCall.arguments,
            ...(r.toolCall.actsAs ? { acts_as: r.toolCall.actsAs } : {}),
            requested_at: r.requestedAt,
          },
        ]
      : [],
  );
}
