import { z } from "zod";
import { jsonObject } from "./json.ts";

/**
 * The shapes of waiting for people on a CrewExecution: what the execution asks for (status.inputRequests, written by
 * the controller) and what people answer (spec.decisions, appended by the API's POST /resume). Each request and
 * decision has a kind, so one list holds every sort of wait: `taskOutput` is a `humanInput` task's answer waiting for
 * approval or a revision; `toolCall` is a call the crew's `toolPolicy.requireApproval` held before it was made.
 */

export const inputKinds = ["taskOutput", "toolCall"] as const;
export const inputKind = z.enum(inputKinds);
export type InputKind = z.infer<typeof inputKind>;

/** Requests and decisions of one execution at most (a request is answered once; revisions are bounded per task). */
export const MAX_DECISIONS = 500;
/** The longest feedback a person may give, in characters. */
export const MAX_FEEDBACK_CHARS = 10_000;

const revision = z
  .number()
  .int()
  .min(0)
  .describe(
    "Which run of the task: 0 its first, then one more per decision that ran it again (its answer sent back, or its held tool calls answered)",
  );

/** What a person is shown of a held tool call: never a secret (its arguments are redacted, core/tool-approval.ts). */
export const heldToolCall = z.object({
  id: z.string().min(1).max(200).describe("The call's id in the agent's loop: POST /resume's tool_call_id"),
  tool: z
    .string()
    .describe("The call as toolPolicy.requireApproval names it: gmail/send_email, server#tool, http_request:POST"),
  arguments: jsonObject.describe("The call's arguments, values under secret names (token, password…) redacted"),
  actsAs: z
    .string()
    .optional()
    .describe("The user whose connected account the call would act with (an app action); only they may decide"),
});
export type HeldToolCall = z.infer<typeof heldToolCall>;

export const inputRequest = z.object({
  kind: inputKind.describe(
    "taskOutput: a humanInput task's answer waits for a person to approve or revise it; toolCall: a held tool call waits for a person to approve or deny it",
  ),
  task: z.string().describe("The task's name"),
  revision,
  requestedAt: z.string().describe("When the execution began to wait (RFC 3339)"),
  toolCall: heldToolCall.optional().describe("kind toolCall: the call held"),
});
export type InputRequest = z.infer<typeof inputRequest>;

export const decision = z.object({
  kind: inputKind,
  task: z.string().describe("The task's name"),
  revision,
  toolCallId: z.string().max(200).optional().describe("kind toolCall: the held call decided on"),
  approve: z
    .boolean()
    .describe(
      "taskOutput — true: the answer is accepted; false: the task runs again with the feedback. toolCall — true: the call is made; false: the model is told it was denied",
    ),
  feedback: z
    .string()
    .max(MAX_FEEDBACK_CHARS)
    .default("")
    .describe("The person's words: a revision's instructions, or a note given to the later tasks with the output"),
  decidedBy: z
    .object({ kind: z.enum(["org", "user"]), subject: z.string() })
    .describe("The token that decided: its kind and subject"),
  decidedAt: z.string().describe("When the API recorded the decision (RFC 3339)"),
});
export type Decision = z.infer<typeof decision>;

export const webhookAuthStrategies = ["bearer", "basic"] as const;

/** AMP's human-input webhook on the execution: where to POST a wait, and the Secret holding its credentials. */
export const humanInputWebhook = z.object({
  url: z.string().url().describe("POSTed when a task waits for a person: the execution id, the task id, its output"),
  authentication: z
    .object({
      strategy: z.enum(webhookAuthStrategies),
      secretRef: z
        .object({ name: z.string().min(1), key: z.string().min(1) })
        .describe("The Secret (in the execution's namespace) whose key holds the Authorization header's value"),
    })
    .optional()
    .describe("The credentials the kickoff gave, kept in a Secret owned by the execution; never in the spec itself"),
});
export type HumanInputWebhook = z.infer<typeof humanInputWebhook>;
