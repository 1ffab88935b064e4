import { z } from "zod";
import { errorBody, kickoffResponse, webhookSigningResponse } from "../core/api-bodies.ts";
import {
  flowInputsResponse,
  flowKickoffRequest,
  flowResumeRequest,
  flowResumeResponse,
  flowsResponse,
  flowStatusResponse,
  flowStopResponse,
} from "./flow-bodies.ts";
import { json, requestErrors } from "./openapi-responses.ts";
import type { ExtraPaths } from "./openapi.ts";

const tags = ["flows"];
const errors = {
  ...requestErrors,
  "401": json(errorBody, "Invalid or missing bearer token, or a token that may not use this flow", {
    "WWW-Authenticate": z.literal("Bearer"),
  }),
  "404": json(errorBody, 'Unknown flow ("Flow not found"), or no run with this kickoff_id ("Execution not found")'),
};
const flow = z.string().meta({ description: "The flow's name, as GET /flows lists it" });
const kickoffId = z.string().meta({
  description: "The kickoff_id that POST /flows/{flow}/kickoff answered",
  example: "6f1c9a52-5c1e-4d84-9d8e-0f0e7d3b1a2c",
});
const params = (withId: boolean) => ({
  requestParams: { path: z.object({ flow, ...(withId ? { kickoff_id: kickoffId } : {}) }) },
});

/**
 * `/flows` and `/flows/{flow}/…`: declarative CrewAI flows (`crewai.flow/v1`), served as AMP serves deployed flows.
 * In the document where the API serves flows (`kubecrew dev` with a flow in its crews folder).
 */
export const flowPaths: ExtraPaths = {
  "/flows": {
    get: {
      operationId: "listFlows",
      tags,
      summary: "The flows the token may use, with their inputs and methods",
      responses: { "200": json(flowsResponse, "Flows, by name"), ...errors },
    },
  },
  "/flows/{flow}/inputs": {
    get: {
      operationId: "getFlowInputs",
      tags,
      summary: "The fields of the flow's state schema (else its default state's keys)",
      ...params(false),
      responses: { "200": json(flowInputsResponse, "The inputs a kickoff may give"), ...errors },
    },
  },
  "/flows/{flow}/kickoff": {
    post: {
      operationId: "kickoffFlow",
      tags,
      summary: "Start a run of the flow",
      description:
        "The inputs are laid over the state's defaults and checked against the state's JSON Schema; the start " +
        "methods run at once.",
      ...params(false),
      requestBody: { content: { "application/json": { schema: flowKickoffRequest } } },
      responses: {
        "200": json(kickoffResponse, "Run started"),
        ...errors,
        "403": json(errorBody, "A user token named another user in `user` (only org tokens may)"),
        "422": json(
          errorBody,
          "Inputs the state schema refuses: details.missing_inputs names the required fields not given, " +
            "details.invalid_inputs each value the schema refuses (JSON pointer and reason)",
        ),
      },
    },
  },
  "/flows/{flow}/status/{kickoff_id}": {
    get: {
      operationId: "getFlowStatus",
      tags,
      summary: "Status of a run",
      description:
        "AMP's three shapes: running (current_task names the running method; PENDING_HUMAN_INPUT while a " +
        "human_feedback waits, with what it waits on), completed (every method's output and the outcomes taken) " +
        "and error (a failed or stopped run is a 200).",
      ...params(true),
      responses: { "200": json(flowStatusResponse, "running, completed or error"), ...errors },
    },
  },
  "/flows/{flow}/status/{kickoff_id}/events": {
    get: {
      operationId: "getFlowEvents",
      tags,
      summary: "The run's events as Server-Sent Events",
      description:
        "method_started, method_completed (with the output and any outcome), method_failed, " +
        "human_feedback_requested and flow_finished (its phase), each with an id (1, 2, …) and JSON data naming the " +
        "method. Send Last-Event-ID to resume after an event; the stream ends after flow_finished.",
      requestParams: {
        ...params(true).requestParams,
        header: z.object({
          "last-event-id": z.string().optional().meta({ description: "The id of the last event received" }),
        }),
      },
      responses: {
        "200": { description: "The event stream", content: { "text/event-stream": { schema: z.string() } } },
        ...errors,
      },
    },
  },
  "/flows/{flow}/resume": {
    post: {
      operationId: "resumeFlow",
      tags,
      summary: "Answer the human_feedback method a run waits on",
      description:
        "With emit, the feedback chooses the outcome: empty feedback takes default_outcome (else the first); " +
        "feedback naming an outcome takes it (the longest named); other feedback takes the first.",
      ...params(false),
      requestBody: { content: { "application/json": { schema: flowResumeRequest } } },
      responses: {
        "200": json(flowResumeResponse, "The method's feedback is recorded and the run goes on"),
        ...errors,
        "409": json(errorBody, "The run waits for no feedback (or for another method's than task_id)"),
      },
    },
  },
  "/flows/{flow}/webhook-signing": {
    get: {
      operationId: "getFlowWebhookSigning",
      tags,
      summary: "The secret that signs the flow's webhooks (org tokens; kubecrew dev)",
      description:
        "A run's webhooks (taskWebhookUrl: one per method run, event method; crewWebhookUrl: the run's end, event " +
        "flow) carry X-Kubecrew-Signature: sha256=HMAC-SHA256(secret, timestamp + '.' + body), as a crew's. In " +
        "kubecrew dev this answers the secret; on a cluster it answers 404 and the secret is in the Secret " +
        "<flow>-flow-webhook (or the one the Flow's kubecrew.io/webhook-secret annotation names).",
      ...params(false),
      responses: {
        "200": json(webhookSigningResponse, "The secret"),
        ...errors,
        "403": json(errorBody, "A user token"),
      },
    },
  },
  "/flows/{flow}/stop/{kickoff_id}": {
    post: {
      operationId: "stopFlow",
      tags,
      summary: "Stop a run: running methods are stopped and no other starts",
      ...params(true),
      responses: {
        "200": json(flowStopResponse, "Stopped"),
        ...errors,
        "409": json(errorBody, "The run has already finished"),
      },
    },
  },
};
