import { z } from "zod";
import { API_VERSION } from "./api-group.ts";
import { appUser, condition, crewSpecShape, objectMeta } from "./crew.ts";
import { decision, humanInputWebhook, inputRequest, MAX_DECISIONS } from "./human-input-schema.ts";
import { jsonObject } from "./json.ts";
import { usageStatus } from "./usage.ts";

/** An execution id as the API hands it out (kickoff_id, a UUID); paths and commands may spell it in upper case. */
export const EXECUTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const executionPhases = ["Pending", "Running", "WaitingForInput", "Succeeded", "Failed", "Stopped"] as const;
export const executionPhase = z.enum(executionPhases);
export type ExecutionPhase = z.infer<typeof executionPhase>;

export const taskPhases = ["Pending", "Running", "WaitingForInput", "Succeeded", "Failed", "Stopped"] as const;
export const taskPhase = z.enum(taskPhases);
export type TaskPhase = z.infer<typeof taskPhase>;

export const requester = z.object({
  kind: z.enum(["org", "user"]).describe("Kind of token that started the execution"),
  subject: z.string().describe("The token's subject (the user, or the org token's id)"),
  user: appUser
    .optional()
    .describe(
      "The user the execution acts as in connected apps: a user token's own user; for an org token the kickoff's user, else the crew's spec.apps.runAs; absent when none",
    ),
});
export type Requester = z.infer<typeof requester>;

export const webhooks = z.object({
  task: z.string().url().optional().describe("POSTed after each task"),
  step: z.string().url().optional().describe("POSTed once per agent step (LLM turn or tool call), in order per task"),
  crew: z.string().url().optional().describe("POSTed when the execution completes or fails"),
});

export const executionSpec = z.object({
  crewRef: z.object({ name: z.string().min(1) }),
  inputs: jsonObject.default({}),
  meta: jsonObject.optional(),
  webhooks: webhooks.optional(),
  humanInputWebhook: humanInputWebhook.optional(),
  requestedBy: requester.optional(),
  stop: z.boolean().default(false).describe("Set to true to stop the execution"),
  decisions: z
    .array(decision)
    .max(MAX_DECISIONS)
    .optional()
    .describe("People's answers to what the execution waits for (POST /resume), oldest first; only ever appended"),
});
export type ExecutionSpec = z.infer<typeof executionSpec>;

export const taskState = z.object({
  name: z.string(),
  agent: z.string().optional(),
  phase: taskPhase,
  revision: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("How many times a person sent the task's output back for a revision (absent: none)"),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  executionTime: z.number().optional().describe("Seconds"),
  message: z.string().optional(),
  usage: usageStatus
    .optional()
    .describe("Tokens of the task's LLM calls (every attempt), written when the execution ends"),
});
export type TaskState = z.infer<typeof taskState>;

export const executionStatus = z.object({
  phase: executionPhase.optional(),
  currentTask: z.string().optional(),
  progress: z.object({ completedTasks: z.number().int(), totalTasks: z.number().int() }).optional(),
  progressText: z.string().optional().describe("completed/total, for kubectl"),
  tasks: z.array(taskState).optional(),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  executionTime: z.number().optional().describe("Seconds"),
  error: z.string().optional(),
  usage: usageStatus
    .optional()
    .describe("Tokens of every LLM call of the execution, and their cost, written once when the execution ends"),
  conditions: z.array(condition).optional(),
  observedGeneration: z.number().int().optional(),
  // Unchecked here (it was checked as the crew): kube/crew-spec-snapshots.ts checks a snapshot as it is read.
  crewSpec: crewSpecShape.optional().describe("The crew as it was when the execution started"),
  inputRequests: z
    .array(inputRequest)
    .max(MAX_DECISIONS)
    .optional()
    .describe(
      "What the execution asked people for, oldest first; one without its answer in spec.decisions is still waiting",
    ),
});
export type ExecutionStatus = z.infer<typeof executionStatus>;

export const crewExecution = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("CrewExecution"),
  metadata: objectMeta,
  spec: executionSpec,
  status: executionStatus.optional(),
});
export type CrewExecution = z.infer<typeof crewExecution>;

/** The error a stopped execution reports (`POST /stop`): clients tell a stopped run from a failed one by it. */
export const EXECUTION_STOPPED_ERROR = "Execution stopped";

export function isFinished(phase: ExecutionPhase | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed" || phase === "Stopped";
}
