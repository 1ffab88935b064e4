import type { ExecutionSpec, ExecutionStatus } from "./execution.ts";
import type { Decision, InputRequest } from "./human-input-schema.ts";

/**
 * Waiting for people, read from an execution: its requests (status.inputRequests, the controller's) and people's
 * decisions (spec.decisions, the API's). A request is open until a decision answers it (same kind, task and revision,
 * and for a held tool call the same call); a task's revision is which of its runs it is on. Pure: decide() and the API read the same.
 */

type Decisions = Pick<ExecutionSpec, "decisions">;
type Requests = Pick<ExecutionStatus, "inputRequests"> | undefined;

const answers = (d: Decision, r: Pick<InputRequest, "kind" | "task" | "revision" | "toolCall">) =>
  d.kind === r.kind && d.task === r.task && d.revision === r.revision && d.toolCallId === r.toolCall?.id;

/**
 * The run task `task` is on (its revision): 0 at first, then one more per answer a person sent back and per run whose
 * held tool calls were all decided (each such decision runs the task again, as a run of its own).
 */
export function taskRevision(execution: { spec: Decisions; status?: Requests }, task: string): number {
  return timesSentBack(execution.spec, task) + toolRoundsAnswered(execution, task);
}

/** How many of the task's answers a person sent back (bounded by runner.humanInputMaxRetries). */
export function timesSentBack(spec: Decisions, task: string): number {
  return (spec.decisions ?? []).filter((d) => d.kind === "taskOutput" && d.task === task && !d.approve).length;
}

/** The runs of the task whose held tool calls all have a decision. */
function toolRoundsAnswered(execution: { spec: Decisions; status?: Requests }, task: string): number {
  const decisions = execution.spec.decisions ?? [];
  const held = (execution.status?.inputRequests ?? []).filter((r) => r.kind === "toolCall" && r.task === task);
  const runs = new Set(held.map((r) => r.revision));
  return [...runs].filter((run) =>
    held.filter((r) => r.revision === run).every((r) => decisions.some((d) => answers(d, r))),
  ).length;
}

/** The decisions on the held tool calls of run `revision` of task `task`. */
export function toolCallDecisions(spec: Decisions, task: string, revision: number): Decision[] {
  return (spec.decisions ?? []).filter((d) => d.kind === "toolCall" && d.task === task && d.revision === revision);
}

/** The requests for the held tool calls of run `revision` of task `task`. */
export function toolCallRequests(status: Requests, task: string, revision: number): InputRequest[] {
  return (status?.inputRequests ?? []).filter(
    (r) => r.kind === "toolCall" && r.task === task && r.revision === revision,
  );
}

/** The last answer of the task a person sent back (its revision and decision), if any. */
export function lastSentBack(spec: Decisions, task: string): Decision | undefined {
  return (spec.decisions ?? [])
    .filter((d) => d.kind === "taskOutput" && d.task === task && !d.approve)
    .reduce<Decision | undefined>((last, d) => (!last || d.revision > last.revision ? d : last), undefined);
}

/** The decision on answer `revision` of task `task`, if a person gave one. */
export function decisionOn(spec: Decisions, task: string, revision: number): Decision | undefined {
  return (spec.decisions ?? []).find((d) => answers(d, { kind: "taskOutput", task, revision }));
}

/** The request for answer `revision` of task `task`, if the execution made it. */
export function requestFor(status: Requests, task: string, revision: number): InputRequest | undefined {
  return status?.inputRequests?.find((r) => r.kind === "taskOutput" && r.task === task && r.revision === revision);
}

/** What the execution waits for: its requests that no decision answers yet, oldest first. */
export function openRequests(spec: Decisions, status: Requests): InputRequest[] {
  const decisions = spec.decisions ?? [];
  return (status?.inputRequests ?? []).filter((r) => !decisions.some((d) => answers(d, r)));
}

/**
 * How long the execution has waited for people, up to `now`, in milliseconds (waits at the same time counted once):
 * its deadline (runner.executionTimeoutSeconds) moves on by as much, so a person's time does not use up the crew's.
 */
export function waitedMs(spec: Decisions, status: Requests, now: Date): number {
  const decisions = spec.decisions ?? [];
  const spans = (status?.inputRequests ?? [])
    .map((r) => {
      const from = Date.parse(r.requestedAt);
      const answer = decisions.find((d) => answers(d, r));
      const to = answer ? Date.parse(answer.decidedAt) : now.getTime();
      return [from, Math.max(from, Math.min(to, now.getTime()))] as const;
    })
    .filter(([from, to]) => Number.isFinite(from) && Number.isFinite(to))
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [from, to] of spans) {
    const start = Math.max(from, end);
    if (to > start) total += to - start;
    end = Math.max(end, to);
  }
  return total;
}
