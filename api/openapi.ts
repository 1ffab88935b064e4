import { createDocument, type ZodOpenApiPathsObject } from "zod-openapi";
import { z } from "zod";
import { json, requestErrors } from "./openapi-responses.ts";
import {
  errorBody,
  inputsResponse,
  kickoffRequest,
  kickoffResponse,
  resumeRequest,
  resumeResponse,
  statusResponse,
  stopResponse,
  webhookSigningResponse,
} from "../core/api-bodies.ts";
import { crewsResponse, executionsResponse } from "./routes/listing-bodies.ts";

const healthBody = z.object({ status: z.enum(["ok", "unavailable"]) }).meta({ id: "Health" });
const errors = {
  "401": json(errorBody, "Invalid or missing bearer token", { "WWW-Authenticate": z.literal("Bearer") }),
  "404": json(errorBody, "Unknown crew, or no execution with this kickoff_id that the token may see"),
  ...requestErrors,
};
/** The specification's path parameter of the status routes: the kickoff_id, a UUID. */
const kickoffId = z.guid().meta({
  description: "The kickoff_id that POST /kickoff answered",
  example: "6f1c9a52-5c1e-4d84-9d8e-0f0e7d3b1a2c",
});

const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .meta({
    description:
      "Makes a retried kickoff safe: for 24 hours the same key (from the same token and crew) with the same body " +
      "answers the kickoff_id of the first request instead of starting another run; with a different body it is " +
      "422. 1-255 visible ASCII characters, bare or as a quoted string; a UUID is a good key.",
    example: "8e03978e-40d5-43e8-bc93-6894a57f9324",
  });
const idempotentReplayed = z
  .literal("true")
  .optional()
  .meta({ description: "Present when the answer is the kickoff_id of an earlier request with the same key" });

function crewPaths(prefix: string, crewParam: boolean): ZodOpenApiPathsObject {
  const path = crewParam ? { crew: z.string().meta({ description: "Crew name" }) } : undefined;
  const params = (extra?: Record<string, z.ZodType>) =>
    path || extra ? { requestParams: { path: z.object({ ...path, ...extra }) } } : {};
  const tags = [crewParam ? "crews" : "default crew"];
  const statusOp = (operationId: string) => ({
    get: {
      operationId,
      tags,
      summary: "Status of an execution",
      ...params({ kickoff_id: kickoffId }),
      responses: { "200": json(statusResponse, "running, completed or error (a failed run is a 200)"), ...errors },
    },
  });
  const suffix = crewParam ? "ForCrew" : "";
  return {
    [`${prefix}/inputs`]: {
      get: {
        operationId: `getInputs${suffix}`,
        tags,
        summary: "Inputs the crew needs",
        ...params(),
        responses: { "200": json(inputsResponse, "Declared inputs and discovered placeholders"), ...errors },
      },
    },
    [`${prefix}/kickoff`]: {
      post: {
        operationId: `kickoff${suffix}`,
        tags,
        summary: "Start an execution",
        requestParams: { ...params().requestParams, header: z.object({ "Idempotency-Key": idempotencyKey }) },
        requestBody: { content: { "application/json": { schema: kickoffRequest } } },
        responses: {
          "200": json(kickoffResponse, "Execution started, or the one this Idempotency-Key started (a retry)", {
            "Idempotent-Replayed": idempotentReplayed,
          }),
          ...errors,
          "400": {
            ...errors["400"],
            description: `${errors["400"].description}, or a malformed Idempotency-Key header`,
          },
          "403": json(errorBody, "A user token named another user in `user` (only org tokens may)"),
          "422": json(
            errorBody,
            "Missing inputs (details.missing_inputs lists them), an Idempotency-Key used before with a different " +
              "body (details.idempotency_key), or a crew whose MCP server URLs the outbound URL policy refuses " +
              "(details.mcp_servers: field, server, url, reason)",
          ),
        },
      },
    },
    [`${prefix}/status/{kickoff_id}`]: statusOp(`getStatus${suffix}`),
    [`${prefix}/{kickoff_id}/status`]: statusOp(`getStatusAlias${suffix}`),
    [`${prefix}/status/{kickoff_id}/events`]: {
      get: {
        operationId: `getEvents${suffix}`,
        tags,
        summary: "The execution's events as Server-Sent Events",
        description:
          "task_started, step (a person's decision is a step of kind decision), human_input_requested, " +
          "tool_call_held, task_completed, task_failed, execution_completed, execution_failed; each with an id and " +
          "JSON data. An id is opaque: 1, 2, … while tasks run one after " +
          "another, the counts per task (1.3~0) while several run at once. Send Last-Event-ID to resume after an " +
          "event. Comment lines keep a quiet stream open; the stream ends after the final event.",
        ...params({ kickoff_id: kickoffId }),
        requestParams: {
          ...params({ kickoff_id: kickoffId }).requestParams,
          header: z.object({
            "last-event-id": z.string().optional().meta({ description: "The id of the last event received" }),
          }),
        },
        responses: {
          "200": {
            description: "The event stream",
            content: { "text/event-stream": { schema: z.string() } },
          },
          ...errors,
        },
      },
    },
    [`${prefix}/executions`]: {
      get: {
        operationId: `listExecutions${suffix}`,
        tags,
        summary: "The crew's executions, newest first (a user token sees only the ones it started)",
        ...params(),
        responses: { "200": json(executionsResponse, "Status of each execution, without outputs"), ...errors },
      },
    },
    [`${prefix}/resume`]: {
      post: {
        operationId: `resume${suffix}`,
        tags,
        summary: "Approve the answer a humanInput task waits with, or send it back with feedback (CrewAI AMP's)",
        description:
          "is_approve true: the answer is accepted and the execution goes on; human_feedback goes to the later tasks " +
          "with the output. false: the task runs again with the feedback, at most runner.humanInputMaxRetries times. " +
          "taskWebhookUrl, stepWebhookUrl and crewWebhookUrl, when given, replace the execution's webhook URLs. A " +
          "user token may resume only the executions it started. Of two resumes of one wait exactly one is recorded.",
        ...params(),
        requestBody: { content: { "application/json": { schema: resumeRequest } } },
        responses: {
          "200": json(resumeResponse, "resumed (approved), retrying (sent back) or completed (approved, nothing left)"),
          ...errors,
          "400": json(
            errorBody,
            "Execution is not in pending human input state (it waits for nothing, for another task, or was answered " +
              "already), a task sent back runner.humanInputMaxRetries times, or a malformed body",
          ),
          "403": json(
            errorBody,
            "A tool_call_id the token sees but may not decide (toolPolicy.requireApproval): an app action is only its " +
              "account's user's, any other call an org admin's; the message names who may",
          ),
          "404": json(
            errorBody,
            "Unknown crew, no execution with this execution_id that the token may see, or no such task",
          ),
        },
      },
    },
    [`${prefix}/stop/{kickoff_id}`]: {
      post: {
        operationId: `stop${suffix}`,
        tags,
        summary: "Stop a running execution",
        ...params({ kickoff_id: kickoffId }),
        responses: {
          "200": json(stopResponse, "Stopping"),
          ...errors,
          "400": json(
            errorBody,
            "The execution has already finished; or a malformed request (JSON, Content-Encoding, path %-escape)",
          ),
        },
      },
    },
    [`${prefix}/webhook-signing`]: {
      get: {
        operationId: `getWebhookSigning${suffix}`,
        tags,
        summary: "The secret that signs the crew's webhooks (org tokens only)",
        description:
          "Every task, step and crew webhook carries X-Kubecrew-Timestamp (Unix seconds) and X-Kubecrew-Signature: " +
          'sha256=<hex HMAC-SHA256 of "<timestamp>.<body>"> keyed with this secret. A crew that gives no secret of ' +
          "its own gets one generated. kubecrew dev answers the secret; a cluster answers the Secret that holds it " +
          "(the API cannot read Secrets). Answers carry Cache-Control: no-store.",
        ...params(),
        responses: {
          "200": json(webhookSigningResponse, "The secret, or where it is", {
            "Cache-Control": z.literal("no-store"),
          }),
          ...errors,
          "403": json(errorBody, "A user token: only org tokens may read the secret"),
          "503": json(
            errorBody,
            "The controller has not named the crew's signing Secret yet (a crew just created), or the token store " +
              "(Redis) is down or not answering",
            { "Retry-After": z.string().meta({ description: "Seconds to wait before trying again" }) },
          ),
        },
      },
    },
  };
}

/** Liveness, readiness and this document: no token needed; and the crews a token may use. */
const servicePaths: ZodOpenApiPathsObject = {
  "/crews": {
    get: {
      operationId: "listCrews",
      tags: ["crews"],
      summary: "The crews the token may use, with their description, inputs, agents and tasks",
      responses: { "200": json(crewsResponse, "Crews, by name"), ...errors },
    },
  },
  "/healthz": {
    get: {
      operationId: "liveness",
      tags: ["service"],
      summary: "Liveness: the process answers",
      security: [],
      responses: { "200": json(healthBody, "Alive"), ...requestErrors },
    },
  },
  "/readyz": {
    get: {
      operationId: "readiness",
      tags: ["service"],
      summary: "Readiness: 503 while the token store (Redis) does not answer",
      security: [],
      responses: {
        "200": json(healthBody, "Ready"),
        ...requestErrors,
        "503": json(healthBody, "Not ready: the token store (Redis) does not answer"),
      },
    },
  },
  "/openapi.json": {
    get: {
      operationId: "openApiDocument",
      tags: ["service"],
      summary: "This OpenAPI 3.1 document",
      security: [],
      responses: {
        "200": json(z.object({ openapi: z.string() }).loose(), "The document"),
        ...requestErrors,
      },
    },
  },
};

/** Extra paths other components contribute (the token endpoint, the admin API). */
export type ExtraPaths = ZodOpenApiPathsObject;

/** The OpenAPI 3.1 document of the crew API, generated from the same zod schemas the routes validate with. */
export function openApiDocument(extraPaths: ExtraPaths = {}) {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "kubecrew crew API",
      version: "1.0.0",
      description:
        "Deployed-crew API, wire-compatible with CrewAI AMP: inputs, kickoff, status. Every path answers OPTIONS " +
        "with 204 and Allow, and a method it does not have with 405 and Allow.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths: { ...servicePaths, ...crewPaths("", false), ...crewPaths("/crews/{crew}", true), ...extraPaths },
  });
}
