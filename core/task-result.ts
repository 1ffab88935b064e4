import { z } from "zod";
import { API_VERSION } from "./api-group.ts";
import { objectMeta } from "./crew.ts";
import { jsonObject } from "./json.ts";
import { parkedLoop } from "./parked-loop.ts";
import { stepFields, tokenUsage } from "./task-assignment.ts";

/** One task's output, written by the runner (through the Kubernetes API in cluster mode), owned by its execution. */
export const taskResultSpec = z.object({
  executionRef: z.object({ name: z.string() }),
  taskName: z.string(),
  taskIndex: z.number().int().min(0),
  agent: z.string().describe("The agent's role"),
  output: z.string().optional().describe("The task's whole output (at most 1 MiB)"),
  jsonDict: jsonObject
    .optional()
    .describe("The output's object, for a task with outputJson (CrewAI's json_dict); counted in the 1 MiB"),
  error: z.string().optional().describe("Why the attempt failed"),
  parked: parkedLoop
    .optional()
    .describe("The run stopped before tool calls that need a person's approval (toolPolicy.requireApproval)"),
  attempt: z.number().int().min(1).default(1),
  revision: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Which answer of a humanInput task this attempt gave: 0 (or absent) its first, then one per revision"),
  executionTime: z.number().min(0).describe("Seconds"),
  tokenUsage: tokenUsage.optional(),
  model: z.string().optional(),
  ...stepFields,
});
export type TaskResultSpec = z.infer<typeof taskResultSpec>;

/**
 * Whether a result is its task's: a runner may write only its own task index (the runner results policy), so a
 * result whose name is not the name of its index in the execution's crew is a pod reporting for another task.
 */
export function isOwnTaskResult(crew: { tasks: readonly { name: string }[] }, result: TaskResultSpec): boolean {
  return crew.tasks[result.taskIndex]?.name === result.taskName;
}

export const crewTaskResult = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("CrewTaskResult"),
  metadata: objectMeta,
  spec: taskResultSpec,
});
export type CrewTaskResult = z.infer<typeof crewTaskResult>;
