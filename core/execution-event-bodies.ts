import { z } from "zod";
import { jsonObject } from "./json.ts";
import { STEP_KINDS } from "./task-step.ts";
import { usageBody } from "./usage.ts";

/**
 * The data of each event of `GET /status/{id}/events` as it goes over the wire (snake_case; `event` repeats the SSE
 * event name), for the clients that read the stream. `executionEvents()` (execution-events.ts) builds them.
 */

const base = { kickoff_id: z.string() };

/**
 * A step as `stepWireForm()` sends it, or a person's decision as `decisionSteps()` does (kind `decision`: who decided,
 * when and what, on a held tool call or a humanInput task's answer).
 */
export const stepBody = z.object({
  index: z.number().int(),
  kind: z.enum([...STEP_KINDS, "decision"]),
  tool: z.string().optional(),
  tool_call_id: z.string().optional().describe("decision: the held call decided on (POST /resume's tool_call_id)"),
  acts_as: z.string().optional().describe("decision: the user whose connected account the call acts with"),
  decision: z.enum(["approved", "denied", "sent_back"]).optional().describe("decision: what the person decided"),
  decided_by: z
    .object({ kind: z.enum(["org", "user"]), subject: z.string() })
    .optional()
    .describe("decision: the token that decided"),
  decided_at: z.string().optional().describe("decision: when (started_at is when the wait began)"),
  feedback: z.string().optional().describe("decision: the person's note, when they gave one"),
  coworker: z.string().optional(),
  input: z.string().optional(),
  output: z.string().optional(),
  error: z.string().optional(),
  started_at: z.string(),
  duration_ms: z.number(),
  token_usage: z.object({ input_tokens: z.number(), output_tokens: z.number(), total_tokens: z.number() }).optional(),
});
export type StepBody = z.infer<typeof stepBody>;

export const taskStartedEvent = z.object({
  ...base,
  event: z.literal("task_started"),
  task_id: z.string(),
  started_at: z.string(),
});

export const stepEvent = z.object({
  ...base,
  event: z.literal("step"),
  task_id: z.string(),
  attempt: z.number().int(),
  step: stepBody,
});

export const taskCompletedEvent = z.object({
  ...base,
  event: z.literal("task_completed"),
  task_id: z.string(),
  agent: z.string(),
  output: z.string(),
  json_dict: jsonObject
    .optional()
    .describe("The output's object, for a task with outputJson (CrewAI's TaskOutput.json_dict)"),
  execution_time: z.number(),
  steps: z.number().int().optional(),
  tools_used: z.array(z.string()).optional(),
});

export const humanInputRequestedEvent = z.object({
  ...base,
  event: z.literal("human_input_requested"),
  task_id: z.string(),
  output: z.string().describe("The answer that waits for a person to approve it or send it back (POST /resume)"),
  revision: z.number().int().describe("0 for the task's first answer, then one more per revision"),
  requested_at: z.string(),
});

export const toolCallHeldEvent = z.object({
  ...base,
  event: z.literal("tool_call_held"),
  task_id: z.string(),
  tool_call_id: z.string().describe("POST /resume's tool_call_id"),
  tool: z.string().describe("The call as toolPolicy.requireApproval names it: gmail/send_email, http_request:POST"),
  arguments: jsonObject.describe("The call's arguments, values under secret names redacted"),
  acts_as: z.string().optional().describe("The user whose connected account the call would act with"),
  revision: z.number().int().describe("Which run of the task stopped before the call"),
  requested_at: z.string(),
});

export const taskFailedEvent = z.object({
  ...base,
  event: z.literal("task_failed"),
  task_id: z.string(),
  error: z.string(),
});

export const executionCompletedEvent = z.object({
  ...base,
  event: z.literal("execution_completed"),
  status: z.literal("completed"),
  output: z.string(),
  execution_time: z.number(),
  usage: usageBody.optional().describe("Tokens of every LLM call of the execution, and their cost"),
});

export const executionFailedEvent = z.object({
  ...base,
  event: z.literal("execution_failed"),
  status: z.literal("error"),
  error: z.string(),
  execution_time: z.number(),
  usage: usageBody.optional().describe("Tokens of every LLM call of the execution, and their cost"),
});

export const executionEventBody = z.discriminatedUnion("event", [
  taskStartedEvent,
  stepEvent,
  humanInputRequestedEvent,
  toolCallHeldEvent,
  taskCompletedEvent,
  taskFailedEvent,
  executionCompletedEvent,
  executionFailedEvent,
]);
export type ExecutionEventBody = z.infer<typeof executionEventBody>;

/** The event names a client knows; a newer server may send others, which a client skips. */
export const knownEventNames: readonly string[] = executionEventBody.options.map((o) => o.shape.event.value);
