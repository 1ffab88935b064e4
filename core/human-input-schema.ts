import { z } from "zod";

/**
 * The shapes of waiting for people on a CrewExecution: what the execution asks for (status.inputRequests, written by
 * the controller) and what people answer (spec.decisions, appended by the API's POST /resume). Each request and
 * decision has a kind, so one list holds every sort of wait: `taskOutput` is a `humanInput` task's answer waiting for
 * approval or a revision.
 */

export const inputKinds = ["taskOutput"] as const;
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
  .describe("Which answer of the task: 0 its first, 1 the one after the first revision, and so on");

export const inputRequest = z.object({
  kind: inputKind.describe("taskOutput: a humanInput task's answer waits for a person to approve or revise it"),
  task: z.string().describe("The task's name"),
  revision,
  requestedAt: z.string().describe("When the execution began to wait (RFC 3339)"),
});
export type InputRequest = z.infer<typeof inputRequest>;

export const decision = z.object({
  kind: inputKind,
  task: z.string().describe("The task's name"),
  revision,
  approve: z.boolean().describe("true: the answer is accepted; false: the task runs again with the feedback"),
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
