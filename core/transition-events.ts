import type { CrewSpec } from "./crew.ts";
import type { Action } from "./decision.ts";
import type { ExecutionStatus } from "./execution.ts";

/**
 * The Events a decision records (decide.ts): each task's start and end, each answer that waits for a person, and the
 * execution's end.
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
      actions.push({
        type: "event",
        eventType: "Normal",
        reason: "HumanInputRequested",
        message: `Task "${state.name}" (${position}) waits for a person to approve its answer or ask for a revision`,
      });
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
