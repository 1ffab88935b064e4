import { appActionFromToolName } from "../core/apps.ts";
import type { ToolCallIdentity } from "../core/tool-approval.ts";
import { APPS_SOURCE_NAME } from "./apps-source.ts";
import { HTTP_REQUEST_TOOL } from "./http-request-tool.ts";
import type { ToolSource } from "./tool-tracing.ts";

/**
 * What a call of one of a task's tools is, as `toolPolicy.requireApproval` names it (issue 32 item 4): a tool of the
 * connected apps' server is its app action, a tool of another MCP server is `server#tool`, the built-in `http_request`
 * is known by the method of this call. Undefined: a tool no rule can name (another built-in).
 */
export function callIdentity(source: ToolSource, input: unknown): ToolCallIdentity | undefined {
  if ("builtIn" in source) {
    if (source.builtIn !== HTTP_REQUEST_TOOL) return undefined;
    const method = (input as { method?: unknown } | null | undefined)?.method;
    // A call without a readable method matches only the rule that names no method; the tool refuses it anyway.
    return { source: "http", method: typeof method === "string" ? method.toUpperCase() : "" };
  }
  if (source.server === APPS_SOURCE_NAME) {
    const action = appActionFromToolName(source.tool);
    return action ? { source: "app", ...action } : undefined;
  }
  return { source: "mcp", server: source.server, tool: source.tool };
}
