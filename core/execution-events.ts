import type { ExecutionStatus } from "./execution.ts";
import type { JsonObject } from "./json.ts";
import { successfulResult } from "./observed-task.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { stepWireForm } from "./task-step.ts";

/**
 * The events of one execution, derived from its status and results (level-based, as everything else): for each task
 * in order `task_started`, its `step`s (each attempt's, reported when the attempt ends) — for a humanInput task each
 * answer's steps, then `human_input_requested` with that answer once the execution asked a person about it — then
 * `task_completed` or `task_failed`; at the end `execution_completed` or `execution_failed`. Tasks run one after
 * another and a status only moves forward, so the list only grows: an event's id is its position (1, 2, …), the same
 * for every reader, and a client resumes after the last id it saw (`Last-Event-ID`).
 */
export type ExecutionEventName =
  | "task_started"
  | "step"
  | "human_input_requested"
  | "task_completed"
  | "task_failed"
  | "execution_completed"
  | "execution_failed";

export interface ExecutionEvent {
  id: number;
  event: ExecutionEventName;
  data: JsonObject;
}

export const FINAL_EVENTS: readonly ExecutionEventName[] = ["execution_completed", "execution_failed"];

export function executionEvents(
  kickoffId: string,
  status: ExecutionStatus | undefined,
  results: Record<string, TaskResultSpec[]>,
): ExecutionEvent[] {
  const events: Omit<ExecutionEvent, "id">[] = [];
  const base = { kickoff_id: kickoffId };
  for (const task of status?.tasks ?? []) {
    if (task.phase === "Pending" || !task.startTime) continue;
    events.push({ event: "task_started", data: { ...base, task_id: task.name, started_at: task.startTime } });
    // Answers (revisions) and their attempts in order; a running attempt's steps may show on its in-progress result
    // and on its final one: once. Each answer a person was asked about follows its steps.
    const attempts = [...(results[task.name] ?? [])].sort(
      (a, b) => (a.revision ?? 0) - (b.revision ?? 0) || a.attempt - b.attempt,
    );
    const requests = (status?.inputRequests ?? []).filter((r) => r.kind === "taskOutput" && r.task === task.name);
    const seen = new Set<string>();
    const asked = (upTo: number) => {
      for (const request of requests.filter((r) => r.revision < upTo && !seen.has(`r${r.revision}`))) {
        seen.add(`r${request.revision}`);
        events.push({
          event: "human_input_requested",
          data: {
            ...base,
            task_id: task.name,
            output: successfulResult({ results: attempts }, request.revision)?.output ?? "",
            revision: request.revision,
            requested_at: request.requestedAt,
          },
        });
      }
    };
    for (const result of attempts) {
      asked(result.revision ?? 0);
      for (const step of result.steps ?? []) {
        const key = `${result.revision ?? 0}:${result.attempt}:${step.index}`;
        if (seen.has(key)) continue;
        seen.add(key);
        events.push({
          event: "step",
          data: { ...base, task_id: task.name, attempt: result.attempt, step: stepWireForm(step) },
        });
      }
    }
    asked(Infinity);
    if (task.phase === "Succeeded") {
      const result = successfulResult({ results: results[task.name] ?? [] });
      events.push({
        event: "task_completed",
        data: {
          ...base,
          task_id: task.name,
          agent: result?.agent ?? task.agent ?? "",
          output: result?.output ?? "",
          execution_time: result?.executionTime ?? task.executionTime ?? 0,
          ...(result?.stepCount !== undefined ? { steps: result.stepCount, tools_used: result.toolsUsed ?? [] } : {}),
        },
      });
    } else if (task.phase === "Failed") {
      events.push({
        event: "task_failed",
        data: { ...base, task_id: task.name, error: task.message ?? "failed" },
      });
    }
  }
  const phase = status?.phase;
  if (phase === "Succeeded") {
    const last = status?.tasks?.at(-1);
    const output = last ? (successfulResult({ results: results[last.name] ?? [] })?.output ?? "") : "";
    events.push({
      event: "execution_completed",
      data: { ...base, status: "completed", output, execution_time: status?.executionTime ?? 0 },
    });
  } else if (phase === "Failed" || phase === "Stopped") {
    events.push({
      event: "execution_failed",
      data: {
        ...base,
        status: "error",
        error: status?.error ?? "Execution failed",
        execution_time: status?.executionTime ?? 0,
      },
    });
  }
  return events.map((e, i) => ({ id: i + 1, ...e }));
}
