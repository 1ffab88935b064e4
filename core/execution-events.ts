import { eventId, type EventCursor, type EventLogShape, startCursor } from "./event-cursor.ts";
import { decisionSteps } from "./decision-steps.ts";
import { isFinished, type ExecutionSpec, type ExecutionStatus } from "./execution.ts";
import type { JsonObject } from "./json.ts";
import { successfulResult } from "./observed-task.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { stepWireForm } from "./task-step.ts";
import { executionUsage, taskModel, type LlmPrices } from "./usage.ts";

/**
 * The events of one execution, derived from its status and results (level-based, as everything else): for each task
 * in order `task_started`, its `step`s (each attempt's, reported when the attempt ends) — for a humanInput task each
 * answer's steps, then `human_input_requested` with that answer once the execution asked a person about it; for a run
 * that stopped before held tool calls its steps, then a `tool_call_held` per call; then each decision people made on
 * them as a `step` of kind `decision` (core/decision-steps.ts) — then `task_completed` or `task_failed`; at the end
 * `execution_completed` or `execution_failed`. A status only moves forward, so each task's list only grows; tasks that
 * run at once grow side by side, and a reader's place is a cursor over the lists (core/event-cursor.ts), which is each
 * event's id: a client resumes after the last id it saw (`Last-Event-ID`).
 */
export type ExecutionEventName =
  | "task_started"
  | "step"
  | "human_input_requested"
  | "tool_call_held"
  | "task_completed"
  | "task_failed"
  | "execution_completed"
  | "execution_failed";

export interface ExecutionEvent {
  id: string;
  event: ExecutionEventName;
  data: JsonObject;
}

type EventBody = Omit<ExecutionEvent, "id">;

/** An execution's events as lists that only grow: one per task (in the crew's order), then the execution's own. */
export interface ExecutionEventLog {
  tasks: EventBody[][];
  execution: EventBody[];
  shape: EventLogShape;
}

export const FINAL_EVENTS: readonly ExecutionEventName[] = ["execution_completed", "execution_failed"];

/** Every event from the first, in the order a reader that starts now gets them. */
export function executionEvents(
  kickoffId: string,
  status: ExecutionStatus | undefined,
  results: Record<string, TaskResultSpec[]>,
  decisions?: ExecutionSpec["decisions"],
): ExecutionEvent[] {
  const log = executionEventLog(kickoffId, status, results, undefined, decisions);
  return eventsAfter(log, startCursor(log.shape)).events;
}

/**
 * The events a reader at `cursor` has not had, each task's in turn and then the execution's, each with the id that
 * says what the reader has once it has that event; and the cursor after them all.
 */
export function eventsAfter(
  log: ExecutionEventLog,
  from: EventCursor,
): { events: ExecutionEvent[]; cursor: EventCursor } {
  const cursor: EventCursor = { tasks: [...from.tasks], execution: from.execution };
  const events: ExecutionEvent[] = [];
  log.tasks.forEach((list, i) => {
    for (const body of list.slice(cursor.tasks[i] ?? 0)) {
      cursor.tasks[i] = (cursor.tasks[i] ?? 0) + 1;
      events.push({ id: eventId(cursor, log.shape), ...body });
    }
  });
  for (const body of log.execution.slice(cursor.execution)) {
    cursor.execution += 1;
    events.push({ id: eventId(cursor, log.shape), ...body });
  }
  return { events, cursor };
}

export function executionEventLog(
  kickoffId: string,
  status: ExecutionStatus | undefined,
  results: Record<string, TaskResultSpec[]>,
  prices?: LlmPrices,
  /** The execution's spec.decisions: people's decisions, each a step of the run it decided on. */
  decisions?: ExecutionSpec["decisions"],
): ExecutionEventLog {
  const tasks: EventBody[][] = [];
  const closed: boolean[] = [];
  const finished = isFinished(status?.phase);
  const base = { kickoff_id: kickoffId };
  for (const task of status?.tasks ?? []) {
    const events: EventBody[] = [];
    tasks.push(events);
    // No more comes of a task that ended, nor of any once the execution did.
    closed.push(finished || task.phase === "Succeeded" || task.phase === "Failed" || task.phase === "Stopped");
    if (task.phase === "Pending" || !task.startTime) continue;
    events.push({ event: "task_started", data: { ...base, task_id: task.name, started_at: task.startTime } });
    // Answers (revisions) and their attempts in order; a running attempt's steps may show on its in-progress result
    // and on its final one: once. Each answer a person was asked about follows its steps.
    const attempts = [...(results[task.name] ?? [])].sort(
      (a, b) => (a.revision ?? 0) - (b.revision ?? 0) || a.attempt - b.attempt,
    );
    const waits = waitEvents(task.name, attempts, status, decisions, base);
    const seen = new Set<string>();
    // The waits of each run (and people's decisions on them) follow the run's steps, before the next run's.
    const asked = (upTo: number) => {
      for (const [revision, bodies] of waits) {
        if (revision >= upTo || seen.has(`r${revision}`)) continue;
        seen.add(`r${revision}`);
        events.push(...bodies);
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
          ...(result?.jsonDict !== undefined ? { json_dict: result.jsonDict } : {}),
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
  const events: EventBody[] = [];
  const phase = status?.phase;
  // The final event says what the execution used, as /status does (absent when no tokens were reported).
  const spec = status?.crewSpec;
  const models = Object.keys(results).map((name) => ({ name, model: taskModel(spec, name) }));
  const usage = finished ? executionUsage(models, results, prices) : undefined;
  // UsageBody's cost_usd is absent, never undefined: JSON as it stands.
  const usageField: JsonObject = usage ? { usage: usage as JsonObject } : {};
  if (phase === "Succeeded") {
    const last = status?.tasks?.at(-1);
    const output = last ? (successfulResult({ results: results[last.name] ?? [] })?.output ?? "") : "";
    events.push({
      event: "execution_completed",
      data: { ...base, status: "completed", output, execution_time: status?.executionTime ?? 0, ...usageField },
    });
  } else if (phase === "Failed" || phase === "Stopped") {
    events.push({
      event: "execution_failed",
      data: {
        ...base,
        status: "error",
        error: status?.error ?? "Execution failed",
        execution_time: status?.executionTime ?? 0,
        ...usageField,
      },
    });
  }
  return {
    tasks,
    execution: events,
    shape: { taskCounts: tasks.map((list) => list.length), taskClosed: closed, executionCount: events.length },
  };
}

/**
 * Per run of a task (its revision, in order): what the execution asked people about it — its answer
 * (`human_input_requested`) or its held tool calls (`tool_call_held`, all at once) — then each decision on them as a
 * step. A run's waits are complete before the next run starts, so each task's list still only grows.
 */
function waitEvents(
  task: string,
  results: TaskResultSpec[],
  status: ExecutionStatus | undefined,
  decisions: ExecutionSpec["decisions"],
  base: { kickoff_id: string },
): Map<number, EventBody[]> {
  const waits = new Map<number, EventBody[]>();
  const of = (revision: number) => waits.get(revision) ?? waits.set(revision, []).get(revision)!;
  for (const request of status?.inputRequests ?? []) {
    if (request.task !== task) continue;
    const data: JsonObject = { ...base, task_id: task };
    if (request.kind === "toolCall" && request.toolCall) {
      const call = request.toolCall;
      of(request.revision).push({
        event: "tool_call_held",
        data: {
          ...data,
          tool_call_id: call.id,
          tool: call.tool,
          arguments: call.arguments,
          ...(call.actsAs ? { acts_as: call.actsAs } : {}),
          revision: request.revision,
          requested_at: request.requestedAt,
        },
      });
    } else if (request.kind === "taskOutput") {
      of(request.revision).push({
        event: "human_input_requested",
        data: {
          ...data,
          output: successfulResult({ results }, request.revision)?.output ?? "",
          revision: request.revision,
          requested_at: request.requestedAt,
        },
      });
    }
  }
  for (const { revision, attempt, step } of decisionSteps(task, results, { decisions }, status)) {
    of(revision).push({ event: "step", data: { ...base, task_id: task, attempt, step } });
  }
  return new Map([...waits].sort((a, b) => a[0] - b[0]));
}
