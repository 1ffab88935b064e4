import type { CrewSpec } from "./crew.ts";
import type { Action } from "./decision.ts";
import type { ExecutionStatus } from "./execution.ts";
import type { InputRequest } from "./human-input-schema.ts";

/**
 * The Events a decision records (decide.ts): each task's start and end, each answer or held tool call that waits for a
 * person, and the execution's end.
 */

export function executionEvent(phase: "Succeeded" | "Failed" | "Stopped", message: string): Action {
  if (phase === "Succeeded") return { type: "event", eventType: "Normal", reason: "ExecutionSucceeded", message };
  if (phase === "Stopped") return { type: "event", eventType: "Warning", reason: "ExecutionStopped", message };
  return { type: "event", eventType: "Warning", reason: "ExecutionFailed", message };
}

/** Events for every task whose phase changed since the last written status. */
export function transitionEvents(spec: CrewSpec, previous: ExecutionStatus, next: ExecutionStatus): Action[] {
  const actions: Action[] = [];
  const total = spec.tasks.length;
  for (const [index, state] of (next.tasks ?? []).entries()) {
    const before = previous.tasks?.find((t) => t.name === state.name)?.phase ?? "Pending";
    if (before === state.phase) continue;
    const position = `${index + 1}/${total}`;
    if (state.phase === "Running") {
      actions.push({
        type: "event",
        eventType: "Normal",
        reason: "TaskStarted",
        message: `Task "${state.name}" (${position}) started`,
      });
    }
    if (state.phase === "WaitingForInput") {
      const held = (next.inputRequests ?? []).filter(
        (r) => r.kind === "toolCall" && r.task === state.name && r.revision === (state.revision ?? 0),
      );
      actions.push(
        held.length > 0
          ? {
              type: "event",
              eventType: "Normal",
              reason: "ToolCallApprovalRequested",
              message: `Task "${state.name}" (${position}) ${heldCallsText(held)}`,
            }
          : {
              type: "event",
              eventType: "Normal",
              reason: "HumanInputRequested",
              message: `Task "${state.name}" (${position}) waits for a person to approve its answer or ask for a revision`,
            },
      );
    }
    if (state.phase === "Succeeded") {
      if (before === "Pending") {
        actions.push({
          type: "event",
          eventType: "Normal",
          reason: "TaskStarted",
          message: `Task "${state.name}" (${position}) started`,
        });
      }
      actions.push({
        type: "event",
        eventType: "Normal",
        reason: "TaskSucceeded",
        message: `Task "${state.name}" (${position}) succeeded in ${state.executionTime ?? 0}s`,
      });
    }
    if (state.phase === "Failed") {
      actions.push({
        type: "event",
        eventType: "Warning",
        reason: "TaskFailed",
        message: state.message ?? `Task "${state.name}" failed`,
      });
    }
  }
  return actions;
}

/**
 * What a run parked on held tool calls waits for, as its Event says it: each call's tool and the account it would act
 * with, and so who may decide (core/tool-approval.ts) — never its arguments, which may carry what an Event must not.
 */
function heldCallsText(held: readonly InputRequest[]): string {
  const calls = held.map((r) => {
    const call = r.toolCall!;
    const account = call.actsAs ? `, acting as ${call.actsAs}'s connected account` : "";
    return `${call.tool} (tool_call_id ${call.id}${account})`;
  });
  const owners = [...new Set(held.flatMap((r) => (r.toolCall?.actsAs ? [r.toolCall.actsAs] : [])))];
  const who =
    owners.length === held.length
      ? `only ${owners.join(" or ")}, whose account it would use, may approve or deny`
      : owners.length > 0
        ? `an app action only its account's owner (${owners.join(", ")}) may approve or deny; the others an org admin`
        : "an org admin (an org token, or an admin signed in to the console) may approve or deny";
  const what = held.length === 1 ? `its call of ${calls[0]}` : `its ${held.length} calls of ${calls.join(", ")}`;
  return `waits for a person to approve ${what} before it is made: ${who} (POST /resume with its tool_call_id, or the console)`;
}
