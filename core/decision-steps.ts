import type { ExecutionSpec, ExecutionStatus } from "./execution.ts";
import type { Decision, InputRequest } from "./human-input-schema.ts";
import type { JsonObject } from "./json.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { denialText } from "./tool-approval.ts";

/**
 * People's decisions as steps (issue 32): each approval or denial of a held tool call, and each answer of a humanInput
 * task approved or sent back, is a step of the run it decided on — after that run's own steps, numbered on from them,
 * with who decided, when and what. Derived from spec.decisions (the API's record) and status.inputRequests, so the
 * event stream and the step webhooks show them in `kubecrew dev` and on a cluster alike, and nothing else stores them.
 */

/** What a person decided: an answer or a call approved, a call denied, an answer sent back for a revision. */
export type DecisionVerdict = "approved" | "denied" | "sent_back";

export interface DecisionStep {
  /** The run (revision) of the task the decision was on. */
  revision: number;
  /** The attempt of that run whose steps the decision follows. */
  attempt: number;
  /** The step as webhooks and the event stream send it (kind `decision`). */
  step: JsonObject;
}

const answers = (d: Decision, r: InputRequest) =>
  d.kind === r.kind && d.task === r.task && d.revision === r.revision && d.toolCallId === r.toolCall?.id;

export function verdictOf(d: Decision): DecisionVerdict {
  if (d.approve) return "approved";
  return d.kind === "toolCall" ? "denied" : "sent_back";
}

/** The step's output: the decision in a line, as the model is told of a denial. */
function outcomeText(d: Decision): string {
  const by = d.decidedBy.subject;
  const note = d.feedback.trim();
  if (d.kind === "toolCall" && !d.approve) return denialText(by, d.feedback);
  const verb = d.approve ? "approved" : "sent back";
  return `${verb} by ${by}${note ? `: ${note}` : ""}`;
}

/** The decisions on task `task`'s waits as steps, in the order they were made within each run, runs in order. */
export function decisionSteps(
  task: string,
  results: readonly TaskResultSpec[],
  spec: Pick<ExecutionSpec, "decisions">,
  status: Pick<ExecutionStatus, "inputRequests"> | undefined,
): DecisionStep[] {
  const requests = (status?.inputRequests ?? []).filter((r) => r.task === task);
  const decided = (spec.decisions ?? []).filter((d) => d.task === task);
  const perRun = new Map<number, number>();
  const steps: DecisionStep[] = [];
  for (const d of [...decided].sort((a, b) => a.revision - b.revision)) {
    const request = requests.find((r) => answers(d, r));
    if (!request) continue;
    // The run's last attempt is the one that answered (or parked); its steps come first, the decisions after them.
    const run = results
      .filter((r) => (r.revision ?? 0) === d.revision)
      .reduce<TaskResultSpec | undefined>((last, r) => (!last || r.attempt > last.attempt ? r : last), undefined);
    const before = perRun.get(d.revision) ?? 0;
    perRun.set(d.revision, before + 1);
    const started = Date.parse(request.requestedAt);
    const waited = Date.parse(d.decidedAt) - started;
    const call = request.toolCall;
    steps.push({
      revision: d.revision,
      attempt: run?.attempt ?? 1,
      step: {
        index: (run?.stepCount ?? run?.steps?.length ?? 0) + before,
        kind: "decision",
        ...(call ? { tool: call.tool, tool_call_id: call.id, input: JSON.stringify(call.arguments) } : {}),
        ...(call?.actsAs ? { acts_as: call.actsAs } : {}),
        output: outcomeText(d),
        decision: verdictOf(d),
        decided_by: { kind: d.decidedBy.kind, subject: d.decidedBy.subject },
        decided_at: d.decidedAt,
        ...(d.feedback.trim() ? { feedback: d.feedback } : {}),
        started_at: request.requestedAt,
        duration_ms: Number.isFinite(waited) ? Math.max(0, waited) : 0,
      },
    });
  }
  return steps;
}
