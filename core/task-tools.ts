import { createHash } from "node:crypto";
import { z } from "zod";
import type { Agent, CrewSpec, Task } from "./crew.ts";
import { DEFAULT_MCP_TIMEOUT_SECONDS, mcpServer, parseMcpReference, type McpServer } from "./tools.ts";

/**
 * The tool sources one task may use, resolved from its agent's `mcps` and the crew's `mcpServers` and `toolPolicy`
 * when the task is assigned: the runner needs nothing else of the crew.
 */
export const assignedMcpServer = mcpServer.extend({
  tools: z
    .array(z.string())
    .optional()
    .describe("Only these tools are offered (the server's allow-list narrowed by #tool selections); all when absent"),
});
export type AssignedMcpServer = z.infer<typeof assignedMcpServer>;

export const taskTools = z.object({
  mcpServers: z.array(assignedMcpServer).default([]),
  allowedHosts: z.array(z.string()).default([]),
  only: z.array(z.string()).optional().describe("The task's `tools`: the names of the only tools it may use"),
  requireApproval: z
    .array(z.string())
    .optional()
    .describe("The crew's toolPolicy.requireApproval: calls the runner holds for a person (core/tool-approval.ts)"),
});
export type TaskTools = z.infer<typeof taskTools>;

export const NO_TASK_TOOLS: TaskTools = { mcpServers: [], allowedHosts: [] };

/** Characters of a URL's host, port and path kept in its server's name: the rest of 63 is left to tool names. */
const READABLE_LENGTH = 32;

/**
 * The name a server given by URL in an agent's `mcps` goes by (in errors, and in the tool names the model sees when two
 * servers offer a tool of one name): the URL's host, port and path in letters, digits and `-` (a letter first), cut
 * to 32 characters, then 8 hex digits of the URL's SHA-256. Query and credentials stay out of the readable part (they
 * may be secrets) but not out of the digest, so two URLs never share a name, not even on one host, and a URL always
 * gets the same one. It fits the `mcpServers` name rule and leaves room for a tool name within 64 characters.
 */
export function mcpUrlServerName(url: string): string {
  const { hostname, port, pathname } = new URL(url);
  const words = [hostname, port, pathname]
    .join("-")
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const readable = (/^[A-Za-z]/.test(words) ? words : `mcp-${words}`).slice(0, READABLE_LENGTH).replace(/-+$/, "");
  const digest = createHash("sha256").update(url).digest("hex").slice(0, 8);
  return `${readable}-${digest}`;
}

function serverForUrl(url: string): McpServer {
  return {
    name: mcpUrlServerName(url),
    url,
    transport: "streamable-http",
    headers: [],
    timeoutSeconds: DEFAULT_MCP_TIMEOUT_SECONDS,
  };
}

function narrowed(allowList: string[] | undefined, selected: Set<string> | "all"): string[] | undefined {
  if (selected === "all") return allowList;
  const names = [...selected];
  return allowList ? names.filter((n) => allowList.includes(n)) : names;
}

/** The MCP servers an agent uses, one entry per server however many references name it. */
export function resolveTaskTools(
  spec: Pick<CrewSpec, "mcpServers" | "toolPolicy">,
  agent: Agent,
  task: Task,
): TaskTools {
  const byTarget = new Map<string, { server: McpServer; selected: Set<string> | "all" }>();
  for (const reference of agent.mcps) {
    const parsed = parseMcpReference(reference);
    const server = parsed.isUrl ? serverForUrl(parsed.target) : spec.mcpServers.find((s) => s.name === parsed.target);
    if (!server) throw new Error(`agent "${agent.name}" uses MCP server "${parsed.target}", which is not defined`);
    const entry = byTarget.get(parsed.target) ?? { server, selected: new Set<string>() };
    if (!parsed.tool) entry.selected = "all";
    else if (entry.selected !== "all") entry.selected.add(parsed.tool);
    byTarget.set(parsed.target, entry);
  }
  const mcpServers = [...byTarget.values()].map(({ server, selected }) => {
    const tools = narrowed(server.tools, selected);
    const { tools: _all, ...rest } = server;
    return { ...rest, ...(tools ? { tools } : {}) };
  });
  return {
    mcpServers,
    allowedHosts: spec.toolPolicy.allowedHosts,
    ...(task.tools ? { only: task.tools } : {}),
    ...(spec.toolPolicy.requireApproval.length > 0 ? { requireApproval: spec.toolPolicy.requireApproval } : {}),
  };
}
