import { createDocument, type ZodOpenApiPathsObject } from "zod-openapi";
import { z } from "zod";
import {
  errorBody,
  inputsResponse,
  kickoffRequest,
  kickoffResponse,
  statusResponse,
  stopResponse,
} from "../core/api-bodies.ts";

const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const errors = {
  "400": json(errorBody, "Malformed JSON or wrong types; details name the fields"),
  "401": json(errorBody, "Invalid or missing bearer token"),
  "404": json(errorBody, "Unknown crew or execution"),
  "413": json(errorBody, "Body above the size limit"),
  "503": json(errorBody, "Authentication store unavailable"),
};
const idParam = z.string().meta({ description: "The kickoff_id", example: "6f1c9a52-5c1e-4d84-9d8e-0f0e7d3b1a2c" });

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
      ...params({ id: idParam }),
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
        ...params(),
        requestBody: { content: { "application/json": { schema: kickoffRequest } } },
        responses: {
          "200": json(kickoffResponse, "Execution started"),
          ...errors,
          "422": json(errorBody, "Missing inputs; details.missing_inputs lists them"),
        },
      },
    },
    [`${prefix}/status/{id}`]: statusOp(`getStatus${suffix}`),
    [`${prefix}/{id}/status`]: statusOp(`getStatusAlias${suffix}`),
    [`${prefix}/stop/{id}`]: {
      post: {
        operationId: `stop${suffix}`,
        tags,
        summary: "Stop a running execution",
        ...params({ id: idParam }),
        responses: { "200": json(stopResponse, "Stopping"), ...errors },
      },
    },
  };
}

/** Extra paths other components contribute (the token endpoint, the admin API). */
export type ExtraPaths = ZodOpenApiPathsObject;

/** The OpenAPI 3.1 document of the crew API, generated from the same zod schemas the routes validate with. */
export function openApiDocument(extraPaths: ExtraPaths = {}) {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "kubecrew crew API",
      version: "1.0.0",
      description: "Deployed-crew API, wire-compatible with CrewAI AMP: inputs, kickoff, status.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths: { ...crewPaths("", false), ...crewPaths("/crews/{crew}", true), ...extraPaths },
  });
}
