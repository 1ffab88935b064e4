import { z } from "zod";
import { API_VERSION } from "../api-group.ts";
import { condition, objectMeta } from "../crew.ts";
import { requester } from "../execution.ts";
import { flowWebhookUrls } from "../flow-webhooks.ts";
import { jsonObject, jsonValue } from "../json.ts";

/**
 * The Flow and FlowExecution resources. A Flow's spec is the `crewai.flow/v1` document as CrewAI writes it (its keys
 * unchanged); the CRD holds it loosely (the condition grammar is recursive) and definition.ts and problems.ts judge it,
 * the verdict in the Flow's Ready condition. A FlowExecution is one kickoff of a flow; its name is the kickoff_id.
 */

/** The annotation on a Flow naming the model its agent and crew methods use where they name none (an LlmConfig as JSON). */
export const ANNOTATION_FLOW_LLM = "kubecrew.io/llm";
/** The annotation on a Flow listing the hosts its tool methods' http_request may call (comma-separated patterns). */
export const ANNOTATION_FLOW_ALLOWED_HOSTS = "kubecrew.io/allowed-hosts";

export const flowSpec = z.looseObject({
  schema: z.string().optional().describe("crewai.flow/v1"),
  name: z.string().min(1).describe("The flow's name, as CrewAI's FlowDefinition has it"),
  description: z.string().nullish(),
  state: jsonValue.optional(),
  config: jsonValue.optional(),
  persist: jsonValue.optional(),
  methods: z.record(z.string(), jsonValue).describe("The methods, by name, as CrewAI's FlowDefinition has them"),
});

export const flowStatus = z.object({
  conditions: z.array(condition).optional(),
  observedGeneration: z.number().int().optional(),
  methodCount: z.number().int().optional(),
  startMethods: z.array(z.string()).optional(),
  inputs: z.array(z.string()).optional().describe("The state schema's fields: what a kickoff may give"),
  crews: z.array(z.string()).optional().describe("The Crews its agent and crew methods run"),
});
export type FlowStatus = z.infer<typeof flowStatus>;

export const flowResource = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("Flow"),
  metadata: objectMeta,
  spec: flowSpec,
  status: flowStatus.optional(),
});
export type FlowResource = z.infer<typeof flowResource>;

export const flowExecutionPhases = ["Pending", "Running", "WaitingForInput", "Succeeded", "Failed", "Stopped"] as const;
export type FlowExecutionPhase = (typeof flowExecutionPhases)[number];

export const flowFeedback = z.object({
  activation: z.string().min(1).describe("The waiting method's run, <method>#<n>"),
  feedback: z.string().max(65536),
});

export const flowExecutionSpec = z.object({
  flowRef: z.object({ name: z.string().min(1) }),
  inputs: jsonObject.default({}).describe("The kickoff's state, defaults filled in"),
  meta: jsonObject.optional(),
  webhooks: flowWebhookUrls.optional().describe("The kickoff's webhook URLs (core/flow-webhooks.ts)"),
  requestedBy: requester.optional(),
  stop: z.boolean().default(false).describe("Set to true to stop the run"),
  feedback: z
    .array(flowFeedback)
    .max(1000)
    .optional()
    .describe("People's answers to human_feedback methods (POST /resume), oldest first; only ever appended"),
});
export type FlowExecutionSpec = z.infer<typeof flowExecutionSpec>;

export const methodRunStatus = z.object({
  id: z.string().describe("<method>#<n>: the method's nth run"),
  method: z.string(),
  phase: z.enum(["Running", "WaitingForInput", "Succeeded", "Failed"]),
  startTime: z.string(),
  completionTime: z.string().optional(),
  outcome: z.string().optional(),
  error: z.string().optional(),
});
export type MethodRunStatus = z.infer<typeof methodRunStatus>;

export const flowExecutionStatus = z.object({
  phase: z.enum(flowExecutionPhases).optional(),
  currentMethod: z.string().optional(),
  progress: z.object({ completedMethods: z.number().int(), totalMethods: z.number().int() }).optional(),
  progressText: z.string().optional().describe("completed/total, for kubectl"),
  methods: z.array(methodRunStatus).optional().describe("Each method run, in the order they started"),
  waiting: z
    .object({
      activation: z.string(),
      method: z.string(),
      message: z.string(),
      emit: z.array(z.string()),
      output: jsonValue.optional(),
    })
    .optional()
    .describe("The human_feedback method waiting for POST /resume"),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  executionTime: z.number().optional().describe("Seconds"),
  error: z.string().optional(),
  conditions: z.array(condition).optional(),
  observedGeneration: z.number().int().optional(),
  definition: jsonValue.optional().describe("The flow's document as it was at kickoff"),
  graph: jsonValue.optional().describe("Where the run's graph stands (core/flow/decide-flow.ts)"),
});
export type FlowExecutionStatus = z.infer<typeof flowExecutionStatus>;

export const flowExecution = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("FlowExecution"),
  metadata: objectMeta,
  spec: flowExecutionSpec,
  status: flowExecutionStatus.optional(),
});
export type FlowExecution = z.infer<typeof flowExecution>;

export function isFlowRunOver(phase: FlowExecutionPhase | undefined): boolean {
  return phase === "Succeeded" || phase === "Failed" || phase === "Stopped";
}
