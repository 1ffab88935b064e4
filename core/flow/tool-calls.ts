import { appToolName, resolveAppReference } from "../apps.ts";
import { mcpReference, parseMcpReference, type BuiltinTool } from "../tools.ts";

/**
 * A flow's `call: tool` (CrewAI's tool action: `ref`, and `with` its arguments) on kubecrew's tools. CrewAI's `ref` is
 * a Python class (`module:Class`) or one app action (`<app>/<action>[@<connection>]`); kubecrew runs no Python, and
 * takes instead its own tools: `http_request`, one tool of an MCP server (`https://…/mcp#tool`, as an agent's `mcps`
 * names one) and a connected app's action (`gmail/send_email`). Each becomes the one tool of an agent, called once
 * without a model (core/task-tool-call.ts).
 */

const HTTP_REQUEST: BuiltinTool = "http_request";

/** What an agent needs to offer the tool, and the name the runner finds it by. */
export interface ToolTarget {
  /** The agent's fields: exactly one of them lists the tool. */
  agent: { tools?: BuiltinTool[]; mcps?: string[]; apps?: string[] };
  /** The tool's name in the agent's toolset. */
  tool: string;
}

export type ToolResolution = { ok: true; target: ToolTarget } | { ok: false; problem: string };

const FORMS = `http_request, an MCP server's tool as https://…#tool, or a connected app's action as app/action`;

export function resolveToolRef(ref: string): ToolResolution {
  if (ref === HTTP_REQUEST) return { ok: true, target: { agent: { tools: [HTTP_REQUEST] }, tool: HTTP_REQUEST } };
  const mcp = parseMcpReference(ref);
  if (mcp.isUrl) {
    if (!mcp.tool) return { ok: false, problem: `"${ref}" names an MCP server but no tool: add #<tool>` };
    if (!mcpReference.safeParse(ref).success) return { ok: false, problem: `"${ref}" is not a URL kubecrew can call` };
    return { ok: true, target: { agent: { mcps: [ref] }, tool: mcp.tool } };
  }
  if (/^[\w.]+:[\w.]+$/.test(ref)) {
    return {
      ok: false,
      problem: `"${ref}" is a Python tool class, which only the crewai runtime runs; flows call ${FORMS}`,
    };
  }
  const [app, connection] = ref.split("@");
  if (connection !== undefined) {
    return {
      ok: false,
      problem: `"${ref}" names a connection: kubecrew acts with the kickoff user's account, drop @${connection}`,
    };
  }
  const actions = app?.includes("/") ? resolveAppReference(app) : undefined;
  if (actions?.length === 1) return { ok: true, target: { agent: { apps: [app!] }, tool: appToolName(actions[0]!) } };
  return { ok: false, problem: `"${ref}" is not a tool kubecrew has: flows call ${FORMS}` };
}
