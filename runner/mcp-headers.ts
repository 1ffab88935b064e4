import { z } from "zod";
import { secretEnvName } from "../core/tools.ts";
import type { AssignedMcpServer } from "../core/task-tools.ts";
import type { Env } from "./llm.ts";
import { KubecrewError } from "../core/errors.ts";

/** The variables an MCP server's headers are read from: for docs/configuration.md. */
export const mcpHeaderVariables = z.object({
  "KUBECREW_SECRET_<SECRET>_<KEY>": z
    .string()
    .optional()
    .describe(
      "An MCP server header's value from a Secret (`valueFrom.secretKeyRef`), upper case, other characters `_`: set on the task pod by the controller; under kubecrew dev, by you.",
    ),
});

/** A header whose Secret did not reach the runner: names the variable, never a value. */
export class McpHeaderError extends KubecrewError {
  readonly code = "mcp_header_missing";
  override name = "McpHeaderError";
}

/**
 * The headers sent to one MCP server: a `value` as written in the Crew, a `valueFrom.secretKeyRef` from the variable
 * `secretEnvName()` names (the controller sets it on the task pod from the Secret; `kubecrew dev` passes its own
 * environment). The values are secrets: they go into requests only, never into logs, errors or outcomes.
 */
export function mcpHeaders(server: AssignedMcpServer, env: Env): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of server.headers) {
    if (header.value !== undefined) {
      headers[header.name] = header.value;
      continue;
    }
    const ref = header.valueFrom?.secretKeyRef;
    if (!ref) throw new McpHeaderError(`MCP server "${server.name}": header "${header.name}" has no value`);
    const variable = secretEnvName(ref);
    const value = env[variable];
    if (value === undefined || value === "") {
      throw new McpHeaderError(
        `MCP server "${server.name}": header "${header.name}" comes from Secret ${ref.name}/${ref.key}, ` +
          `but ${variable} is not set for the runner`,
      );
    }
    headers[header.name] = value;
  }
  return headers;
}
