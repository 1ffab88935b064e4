import { buildAssignment } from "./assignment.ts";
import type { CrewSpec } from "./crew.ts";
import { decisionSteps } from "./decision-steps.ts";
import type { Action, DecideInput } from "./decision.ts";
import { isFinished, type ExecutionStatus } from "./execution.ts";
import { requestFor } from "./human-input.ts";
import type { JsonObject } from "./json.ts";
import { successfulResult } from "./observed-task.ts";
import { stepWireForm } from "./task-step.ts";

/**
 * Which webhooks an execution's status calls for and nobody has delivered yet. Level-based: a hook is due for every
 * succeeded task and every answer waiting for a person (the task webhook, and the human-input webhook the kickoff
 * gave), for each step its runners reported (one at a time per task, in order) and, once the execution finished, for
 * the crew, until the adapter records it as delivered (or given up) under its key. The key is the one name of a hook
 * everywhere: the action, the delivery, its record.
 */

/** Seconds to the millisecond, as the payloads report them. */
const round = (n: number) => Math.round(n * 1000) / 1000;

export type WebhookAction = Extract<Action, { type: "webhook" }>;

/** The key of the crew webhook. */
export const CREW_HOOK = "crew";
/** A revision's part of a key: none for a task's first answer (the keys recorded before revisions existed). */
const revisionPart = (revision: number) => (revision > 0 ? `:r${revision}` : "");
/** The key of a task's webhook: one per answer of the task (a revised answer is delivered again). */
export const taskHook = (taskName: string, revision = 0) => `task:${taskName}${revisionPart(revision)}`;
/** The key of one step's webhook: the task, the attempt that took the step, the step's index (and the revision). */
export const stepHook = (taskName: string, attempt: number, index: number, revision = 0) =>
  `step:${taskName}:${attempt}:${index}${revisionPart(revision)}`;
/** The key of the human-input webhook of one answer waiting for a person. */
export const humanInputHook = (taskName: string, revision = 0) => `human-input:${taskName}${revisionPart(revision)}`;

export function dueWebhooks(input: DecideInput, status: ExecutionStatus | undefined): WebhookAction[] {
  const delivered = input.deliveredWebhooks ?? new Set<string>();
  const due = dueHumanInputWebhooks(input, status, delivered);
  const urls = input.execution.spec.webhooks;
  if (!urls || !status) return due;
  const spec = status.crewSpec;
  if (urls.task && spec) {
    for (const [index, task] of (status.tasks ?? []).entries()) {
      const revision = task.revision ?? 0;
      const hook = taskHook(task.name, revision);
      const ready =
        task.phase === "Succeeded" || (task.phase === "WaitingForInput" && recorded(input, task.name, revision));
      if (!ready || delivered.has(hook)) continue;
      due.push({
        type: "webhook",
        hook,
        kind: "task",
        url: urls.task,
        payload: taskWebhookPayload(input, spec, index, revision),
      });
    }
  }
  if (urls.step && spec) due.push(...dueStepWebhooks(input, spec, urls.step, delivered));
  if (urls.crew && isFinished(status.phase) && !delivered.has(CREW_HOOK)) {
    const last = spec?.tasks.at(-1)?.name;
    const output =
      status.phase === "Succeeded" && last ? (successfulResult(input.observed[last])?.output ?? "") : undefined;
    const payload = crewWebhookPayload(input, spec, status, output);
    due.push({ type: "webhook", hook: CREW_HOOK, kind: "crew", url: urls.crew, payload });
  }
  return due;
}

/**
 * Step webhooks go out in order per task: only the first step not yet delivered (or given up) of each task is due,
 * attempts in order, so the next one is due once the adapter has recorded the one before.
 */
function dueStepWebhooks(
  input: DecideInput,
  spec: CrewSpec,
  url: string,
  delivered: ReadonlySet<string>,
): WebhookAction[] {
  const due: WebhookAction[] = [];
  for (const task of spec.tasks) {
    const results = [...(input.observed[task.name]?.results ?? [])].sort(
      (a, b) => (a.revision ?? 0) - (b.revision ?? 0) || a.attempt - b.attempt,
    );
    // People's decisions are steps too, after the steps of the run they decided on (core/decision-steps.ts).
    const decided = decisionSteps(task.name, results, input.execution.spec, input.execution.status);
    const next = [
      ...results.flatMap((r) =>
        (r.steps ?? []).map((step) => ({
          attempt: r.attempt,
          revision: r.revision ?? 0,
          index: step.index,
          wire: () => stepWireForm(step),
        })),
      ),
      ...decided.map((d) => ({ ...d, index: d.step.index as number, wire: () => d.step })),
    ]
      .sort((a, b) => a.revision - b.revision || a.attempt - b.attempt || a.index - b.index)
      .find(({ attempt, revision, index }) => !delivered.has(stepHook(task.name, attempt, index, revision)));
    if (!next) continue;
    const { attempt, revision, index } = next;
    due.push({
      type: "webhook",
      hook: stepHook(task.name, attempt, index, revision),
      kind: "step",
      url,
      payload: {
        kickoff_id: input.execution.name,
        task_id: task.name,
        attempt,
        step: next.wire(),
        meta: input.execution.spec.meta ?? null,
      },
    });
  }
  return due;
}

/**
 * Whether the wait for answer `revision` of a task is in the status as read (written by an earlier decision): a
 * waiting answer's webhooks go out only then, so a client that resumes on receiving one finds the wait recorded.
 */
const recorded = (input: DecideInput, task: string, revision: number) =>
  requestFor(input.execution.status, task, revision) !== undefined;

/**
 * AMP's human-input webhook: for each answer that waits for a person, the execution id, the task id and its output
 * (the adapter adds the kickoff's credentials, which decide() never sees).
 */
function dueHumanInputWebhooks(
  input: DecideInput,
  status: ExecutionStatus | undefined,
  delivered: ReadonlySet<string>,
): WebhookAction[] {
  const url = input.execution.spec.humanInputWebhook?.url;
  if (!url || !status) return [];
  return (status.tasks ?? []).flatMap((task): WebhookAction[] => {
    const revision = task.revision ?? 0;
    const hook = humanInputHook(task.name, revision);
    if (task.phase !== "WaitingForInput" || !recorded(input, task.name, revision) || delivered.has(hook)) return [];
    const payload = {
      execution_id: input.execution.name,
      kickoff_id: input.execution.name,
      task_id: task.name,
      output: successfulResult(input.observed[task.name], revision)?.output ?? "",
      revision,
      requested_at: requestFor(status, task.name, revision)?.requestedAt ?? null,
      meta: input.execution.spec.meta ?? null,
    };
    return [{ type: "webhook", hook, kind: "human_input", url, payload }];
  });
}

function taskWebhookPayload(input: DecideInput, spec: CrewSpec, index: number, revision: number): JsonObject {
  const assignment = buildAssignment(input, spec, index);
  const result = successfulResult(input.observed[assignment.task.name], revision);
  return {
    kickoff_id: input.execution.name,
    task_id: assignment.task.name,
    name: assignment.task.name,
    description: assignment.task.description,
    expected_output: assignment.task.expectedOutput,
    agent: assignment.agent.role,
    output: result?.output ?? "",
    ...(result?.jsonDict !== undefined ? { json_dict: result.jsonDict } : {}),
    execution_time: round(result?.executionTime ?? 0),
    meta: input.execution.spec.meta ?? null,
  };
}

function crewWebhookPayload(
  input: DecideInput,
  spec: CrewSpec | undefined,
  status: ExecutionStatus,
  output?: string,
): JsonObject {
  const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const task of spec?.tasks ?? []) {
    for (const r of input.observed[task.name]?.results ?? []) {
      usage.input_tokens += r.tokenUsage?.inputTokens ?? 0;
      usage.output_tokens += r.tokenUsage?.outputTokens ?? 0;
      usage.total_tokens += r.tokenUsage?.totalTokens ?? 0;
    }
  }
  return {
    kickoff_id: input.execution.name,
    status: status.phase === "Succeeded" ? "completed" : "error",
    result: output ?? null,
    error: status.error ?? null,
    execution_time: status.executionTime ?? 0,
    token_usage: usage,
    meta: input.execution.spec.meta ?? null,
  };
}
