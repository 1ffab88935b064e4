import { z } from "zod";
import { jsonObject } from "./json.ts";
import { MAX_FEEDBACK_CHARS } from "./human-input-schema.ts";

/**
 * A task's agent loop parked on held tool calls (issue 32 item 4): the runner reports it instead of an answer, with
 * the conversation so far, and no pod waits; once people have decided on every held call, the task's next run is
 * given the same conversation and the answers (`task.resume` of its assignment) and the loop goes on from there.
 */

/** Held calls in one park at most (the calls of one LLM turn). */
export const MAX_HELD_CALLS = 20;
/** Messages of a parked conversation at most (the loop's turns are bounded by the agent's maxIter anyway). */
export const MAX_PARKED_MESSAGES = 1000;

export const heldCallRecord = z.object({
  approvalId: z.string().min(1).max(200).describe("The loop's approval request the answer goes to"),
  toolCallId: z.string().min(1).max(200).describe("The call's id in the loop"),
  toolName: z.string().describe("The tool's name as the model called it"),
  tool: z
    .string()
    .describe("The call as toolPolicy.requireApproval names it: gmail/send_email, server#tool, http_request:POST"),
  shownArguments: jsonObject.describe("The call's arguments as people are shown them: secrets redacted"),
  appAction: z
    .boolean()
    .optional()
    .describe("true: an action of a connected app, made with the execution's user's account"),
});
export type HeldCallRecord = z.infer<typeof heldCallRecord>;

export const parkedLoop = z.object({
  messages: z
    .array(jsonObject)
    .max(MAX_PARKED_MESSAGES)
    .describe("The conversation so far (the AI SDK's messages, JSON), the held calls' requests last"),
  held: z.array(heldCallRecord).min(1).max(MAX_HELD_CALLS).describe("The calls waiting for a person, in call order"),
});
export type ParkedLoopRecord = z.infer<typeof parkedLoop>;

export const toolCallAnswer = z.object({
  toolCallId: z.string(),
  approve: z.boolean(),
  by: z.string().describe("Who decided (the token's subject), as the model is told on a denial"),
  feedback: z.string().max(MAX_FEEDBACK_CHARS).default(""),
});
export type ToolCallAnswer = z.infer<typeof toolCallAnswer>;

export const loopResume = parkedLoop.extend({
  answers: z.array(toolCallAnswer).max(MAX_HELD_CALLS).describe("A person's decision on each held call"),
});
export type LoopResume = z.infer<typeof loopResume>;
