import { z } from "zod";
import { usageBody } from "./usage.ts";
import { MAX_FEEDBACK_CHARS } from "./human-input-schema.ts";
import { jsonObject, jsonValue } from "./json.ts";

/** Bodies of the crew API, wire-compatible with CrewAI AMP's deployed-crew API. */

export const inputsResponse = z.object({ inputs: z.array(z.string()) }).meta({ id: "InputsResponse" });

/**
 * An input value: a string, number, boolean, object or array (objects and arrays are rendered as JSON). null is
 * refused (CrewAI AMP's inputs are values to fill placeholders; null fills none): a 400 naming `inputs.<name>`.
 */
export const inputValue = z
  .union([z.string(), z.number(), z.boolean(), z.array(jsonValue), z.record(z.string(), jsonValue)], {
    error: (issue) =>
      issue.input === null ? "must not be null (send a string, number, boolean, object or array)" : undefined,
  })
  .meta({ id: "InputValue", description: "A string, number, boolean, object or array; not null" });

/** A kickoff's `user`: whose connected apps the run acts with (a crew's kickoff and a flow's alike). */
export const kickoffUser = z.string().min(1).max(256);

export const kickoffRequest = z
  .object({
    inputs: z
      .record(z.string(), inputValue)
      .default({})
      .describe("Values for the crew's inputs: strings, numbers, booleans, objects or arrays (not null)"),
    meta: jsonObject.optional().describe("Free-form data echoed to webhooks"),
    taskWebhookUrl: z.string().url().optional(),
    stepWebhookUrl: z.string().url().optional(),
    crewWebhookUrl: z.string().url().optional(),
    humanInputWebhook: z
      .object({
        url: z.string().url(),
        authentication: z
          .discriminatedUnion("strategy", [
            z.object({ strategy: z.literal("bearer"), token: z.string().min(1).max(4096) }),
            z.object({
              strategy: z.literal("basic"),
              username: z
                .string()
                .min(1)
                .max(1024)
                .refine((u) => !u.includes(":"), "must not contain ':'"),
              password: z.string().max(4096),
            }),
          ])
          .optional()
          .describe("Sent as the Authorization header of each delivery; kept in a Secret, never logged"),
      })
      .optional()
      .describe(
        "AMP's human-input webhook: POSTed when a humanInput task's answer waits for a person, with execution_id, task_id and output",
      ),
    user: kickoffUser
      .optional()
      .describe(
        "The user whose connected apps the agents act with (org tokens only; a user token always acts as its own user). Without it an org-token kickoff acts as the crew's spec.apps.runAs, if set",
      ),
  })
  .meta({ id: "KickoffRequest" });
export type KickoffRequest = z.infer<typeof kickoffRequest>;

export const kickoffResponse = z.object({ kickoff_id: z.uuid() }).meta({ id: "KickoffResponse" });

/** The fields /status adds for operators (CrewAI clients ignore them): the trace, and a finished run's usage. */
const traceId = {
  trace_id: z
    .string()
    .optional()
    .describe("The execution's OpenTelemetry trace id (32 hex digits), when tracing is on"),
};
const observability = {
  usage: usageBody.optional().describe("Tokens of every LLM call of the execution, and their cost"),
  ...traceId,
};

export const runningStatus = z
  .object({
    status: z.literal("running"),
    state: z.literal("RUNNING"),
    current_task: z.string(),
    progress: z.object({ completed_tasks: z.number().int(), total_tasks: z.number().int() }),
    pending_human_input: z
      .object({
        task_id: z.string().describe("The task whose answer waits"),
        output: z.string().describe("The answer to approve or send back (POST /resume)"),
        requested_at: z.string().describe("When the execution began to wait (RFC 3339)"),
      })
      .optional()
      .describe("Present while the execution waits for a person (AMP's Pending Human Input)"),
    pending_tool_calls: z
      .array(
        z.object({
          task_id: z.string(),
          tool_call_id: z.string().describe("POST /resume's tool_call_id"),
          tool: z.string().describe("The call as toolPolicy.requireApproval names it (gmail/send_email, server#tool…)"),
          arguments: jsonObject.describe("The call's arguments, secrets redacted"),
          acts_as: z.string().optional().describe("The user whose connected account the call acts with"),
          requested_at: z.string().describe("When the call was held (RFC 3339)"),
        }),
      )
      .optional()
      .describe("Tool calls held for a person's approval (toolPolicy.requireApproval), present while any waits"),
    ...traceId,
  })
  .meta({ id: "RunningStatus" });

export const taskOutput = z.object({
  task_id: z.string().describe("The task's name"),
  output: z.string(),
  agent: z.string(),
  execution_time: z.number().describe("Seconds"),
  json_dict: jsonObject
    .optional()
    .describe("The output's object, for a task with outputJson (CrewAI's TaskOutput.json_dict)"),
  steps: z.number().int().optional().describe("How many steps (LLM turns and tool calls) the task took"),
  tools_used: z.array(z.string()).optional().describe("The tools the task called, each once"),
  usage: usageBody.optional().describe("Tokens of the task's LLM calls (every attempt)"),
});

export const completedStatus = z
  .object({
    status: z.literal("completed"),
    state: z.literal("SUCCESS"),
    result: z.object({ output: z.string(), tasks: z.array(taskOutput) }),
    execution_time: z.number().describe("Seconds"),
    ...observability,
  })
  .meta({ id: "CompletedStatus" });

export const errorStatus = z
  .object({
    status: z.literal("error"),
    state: z.literal("FAILED"),
    error: z.string(),
    execution_time: z.number().describe("Seconds"),
    ...observability,
  })
  .meta({ id: "ErrorStatus" });

export const statusResponse = z.union([runningStatus, completedStatus, errorStatus]).meta({ id: "StatusResponse" });
export type StatusResponse = z.infer<typeof statusResponse>;

export const errorBody = z
  .object({
    error: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  })
  .meta({ id: "Error" });
export type ErrorBody = z.infer<typeof errorBody>;

export const resumeRequest = z
  .object({
    execution_id: z.guid().describe("The kickoff_id of the execution that waits"),
    task_id: z.string().min(1).max(63).describe("The task whose answer (or held tool call) waits for a person"),
    tool_call_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "A held tool call's id (pending_tool_calls): is_approve true makes the call, false tells the model it was denied, with the feedback",
      ),
    human_feedback: z
      .string()
      .max(MAX_FEEDBACK_CHARS)
      .describe(
        "With is_approve false: what to change (the task runs again with it); with true: a note the later tasks get with the output",
      ),
    is_approve: z.boolean().describe("true: accept the answer and go on; false: run the task again with the feedback"),
    taskWebhookUrl: z.string().url().optional(),
    stepWebhookUrl: z.string().url().optional(),
    crewWebhookUrl: z.string().url().optional(),
  })
  .meta({ id: "ResumeRequest" });
export type ResumeRequest = z.infer<typeof resumeRequest>;

export const resumeResponse = z
  .object({
    status: z
      .enum(["resumed", "retrying", "completed"])
      .describe(
        "resumed: approved, later tasks go on; retrying: the task runs again; completed: approved, nothing left",
      ),
    message: z.string(),
  })
  .meta({ id: "ResumeResponse" });
export type ResumeResponse = z.infer<typeof resumeResponse>;

export const stopResponse = z
  .object({ kickoff_id: z.uuid(), status: z.literal("stopping") })
  .meta({ id: "StopResponse" });

/**
 * `GET /webhook-signing`: the secret that signs the crew's webhooks — the secret itself where the API holds it
 * (`kubecrew dev`), else the Secret that holds it (a cluster: the API cannot read Secrets; its owner reads it with
 * kubectl).
 */
export const webhookSigningResponse = z
  .object({
    generated: z.boolean().describe("True when kubecrew generated the secret because the crew gives none of its own"),
    secret: z
      .string()
      .optional()
      .describe("The signing secret itself (kubecrew dev: generated per crew when the process starts using it)"),
    secret_ref: z
      .object({ name: z.string(), key: z.string() })
      .optional()
      .describe(
        "In a cluster: the Secret, in the crew's namespace, and its key that hold the secret: " +
          "kubectl get secret <name> -o jsonpath='{.data.<key>}' | base64 -d",
      ),
  })
  .meta({ id: "WebhookSigningResponse" });
export type WebhookSigningResponse = z.infer<typeof webhookSigningResponse>;
