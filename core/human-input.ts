import type { ExecutionSpec, ExecutionStatus } from "./execution.ts";
import type { Decision, InputRequest } from "./human-input-schema.ts";

/**
 * Waiting for people, read from an execution: its requests (status.inputRequests, the controller's) and people's
 * decisions (spec.decisions, the API's). A request is open until a decision answers it (same kind, task and revision);
 * a task's revision is how many of its answers were sent back. Pure: decide() and the API read the same.
 */

type Decisions = Pick<ExecutionSpec, "decisions">;

const answers = (d: Decision, r: Pick<InputRequest, "kind" | "task" | "revision">) =>
  d.kind === r.kind && d.task === r.task && d.revision === r.revision;

/** The revision task `task` is on: 0 until a person sends an answer back, then one more per answer sent back. */
export function taskRevision(spec: Decisions, task: string): number {
  return (spec.decisions ?? []).filter((d) => d.kind === "taskOutput" && d.task === task && !d.approve).length;
}

/** The decision on answer `revision` of task `task`, if a person gave one. */
export function decisionOn(spec: Decisions, task: string, revision: number): Decision | undefined {
  return (spec.decisions ?? []).find((d) => answers(d, { kind: "taskOutput", task, revision }));
}

/** The request for answer `revision` of task `task`, if the execution made it. */
export function requestFor(
  status: Pick<ExecutionStatus, "inputRequests"> | undefined,
  task: string,
  revision: number,
): InputRequest | undefined {
  return status?.inputRequests?.find((r) => r.kind === "taskOutput" && r.task === task && r.revision === revision);
}

/** What the execution waits for: its requests that no decision answers yet, oldest first. */
export function openRequests(
  spec: Decisions,
  status: Pick<ExecutionStatus, "inputRequests"> | undefined,
): InputRequest[] {
  const decisions = spec.decisions ?? [];
  return (status?.inputRequests ?? []).filter((r) => !decisions.some((d) => answers(d, r)));
}

/**
 * How long the execution has waited for people, up to `now`, in milliseconds (waits at the same time counted once):
 * its deadline (runner.executionTimeoutSeconds) moves on by as much, so a person's time does not use up the crew's.
 */
export function waitedMs(
  spec: Decisions,
  status: Pick<ExecutionStatus, "inputRequests"> | undefined,
  now: Date,
): number {
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
