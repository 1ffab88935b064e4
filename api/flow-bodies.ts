import { z } from "zod";
import { errorStatus, inputsResponse, kickoffUser, taskOutput } from "../core/api-bodies.ts";
import { jsonObject, jsonValue } from "../core/json.ts";

/**
 * Bodies of the flow routes (`/flows`, `/flows/{flow}/…`): what the routes validate with and the OpenAPI document
 * describes, AMP's deployed-flow API where it has one.
 */

const flowGraphBody = z
  .object({
    nodes: z.array(
      z.object({
        name: z.string(),
        start: z.boolean(),
        call: z.string().describe("What the method runs: agent, crew, expression, each, tool, script or code"),
        router: z.boolean(),
        humanFeedback: z.boolean(),
      }),
    ),
    edges: z.array(
      z.object({
        from: z.string(),
        to: z.string().describe("The method that listens"),
        outcome: z.string().optional().describe("The outcome of `from` (a router or human_feedback) it listens to"),
        join: z.enum(["and", "or"]).optional().describe("How `to` combines its events: all, or the first"),
      }),
    ),
  })
  .describe("The method graph: who listens to whom (the console draws it)")
  .meta({ id: "FlowGraph" });

export const flowsResponse = z
  .object({
    flows: z.array(
      z.object({
        name: z.string().describe("The flow's name in the paths: metadata.name, or the document's name as a DNS label"),
        flow: z.string().describe("The document's own name (CrewAI's Flow name)"),
        description: z.string(),
        inputs: z.array(z.string()).describe("The state schema's fields"),
        methods: z.array(z.string()).describe("The methods, in the document's order"),
        graph: flowGraphBody,
      }),
    ),
  })
  .meta({ id: "FlowsResponse" });

export const flowInputsResponse = inputsResponse;

export const flowKickoffRequest = z
  .object({
    inputs: jsonObject
      .default({})
      .describe("The run's state over the state's defaults, checked against the flow's state schema"),
    meta: jsonObject.optional().describe("Free-form data, echoed in the run's webhooks"),
    taskWebhookUrl: z
      .string()
      .url()
      .optional()
      .describe("POSTed once per method run that completed (event method: the method, its output and outcome)"),
    stepWebhookUrl: z
      .string()
      .url()
      .optional()
      .describe("POSTed once per agent step a method run took (event step: a crew's step, the method as task_id)"),
    crewWebhookUrl: z
      .string()
      .url()
      .optional()
      .describe("POSTed once when the run has ended (event flow: completed or error, the final output)"),
    user: kickoffUser
      .optional()
      .describe(
        "The user whose connected apps the methods' agents and app actions act with (org tokens only; a user token always acts as its own user)",
      ),
  })
  .meta({ id: "FlowKickoffRequest" });

const feedbackWait = z
  .object({
    method: z.string().describe("The method that waits"),
    message: z.string().describe("Its human_feedback.message"),
    emit: z.array(z.string()).describe("The outcomes the feedback may choose (empty: none)"),
    output: z.string().describe("The method's output, for the person to review"),
  })
  .describe("Present while a human_feedback method waits for POST /resume");

export const flowRunningStatus = z
  .object({
    status: z.literal("running"),
    state: z.enum(["RUNNING", "PENDING_HUMAN_INPUT"]),
    current_task: z.string().describe("The running method, or the one waiting for feedback"),
    progress: z.object({
      completed_tasks: z.number().int().describe("Method runs completed"),
      total_tasks: z.number().int().describe("The flow's methods (more once a method ran more than once)"),
    }),
    human_feedback: feedbackWait.optional(),
  })
  .meta({ id: "FlowRunningStatus" });

export const flowCompletedStatus = z
  .object({
    status: z.literal("completed"),
    state: z.literal("SUCCESS"),
    result: z.object({
      output: z.string().describe("The output of the method that ended last (what CrewAI's kickoff returns)"),
      tasks: z.array(taskOutput).describe("Each method run that completed, in order (task_id: the method)"),
      outputs: z.record(z.string(), jsonValue).describe("CrewAI's outputs.<method>: each method's latest output"),
      outcomes: z
        .array(z.object({ method: z.string(), outcome: z.string() }))
        .describe("Each router and human_feedback outcome, in order: the branches the run took"),
    }),
    execution_time: z.number().describe("Seconds"),
  })
  .meta({ id: "FlowCompletedStatus" });

export const flowStatusResponse = z
  .union([flowRunningStatus, flowCompletedStatus, errorStatus])
  .meta({ id: "FlowStatusResponse" });
export type FlowStatusResponse = z.infer<typeof flowStatusResponse>;

export const flowResumeRequest = z
  .object({
    execution_id: z.string().min(1).describe("The kickoff_id of the run that waits"),
    task_id: z.string().optional().describe("The method that waits (optional: a run waits on one method at a time)"),
    human_feedback: z
      .string()
      .max(64 * 1024)
      .default("")
      .describe("The person's feedback; with emit it chooses the outcome (empty: default_outcome)"),
    is_approve: z.boolean().optional().describe("Accepted for AMP clients; the feedback alone chooses the outcome"),
  })
  .meta({ id: "FlowResumeRequest" });

export const flowResumeResponse = z
  .object({
    status: z.literal("resumed"),
    message: z.string(),
    outcome: z.string().optional().describe("The outcome the feedback chose, when the method has emit"),
  })
  .meta({ id: "FlowResumeResponse" });

export const flowStopResponse = z.object({ status: z.literal("stopped") }).meta({ id: "FlowStopResponse" });
