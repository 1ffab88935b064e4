import { z } from "zod";
import { approvalRule, MAX_APPROVAL_RULES } from "./tool-approval.ts";

/**
 * What an agent may act with: MCP servers (CrewAI's `mcps`, by URL or by the name of a `spec.mcpServers` entry, each
 * with an optional `#tool`) and built-in tools (`tools`), bounded by `maxIter` LLM turns and, for http_request, by the
 * crew's `toolPolicy.allowedHosts`.
 */

/** Size limits (the CRD carries them too). */
export const MAX_MCP_SERVERS = 20;
export const MAX_AGENT_MCPS = 20;
export const MAX_HEADERS = 20;
export const MAX_ALLOWED_HOSTS = 100;
export const DEFAULT_MAX_ITER = 20;
export const MAX_MAX_ITER = 100;
export const DEFAULT_MCP_TIMEOUT_SECONDS = 30;

export const builtinTools = ["http_request"] as const;
export const builtinTool = z.enum(builtinTools);
export type BuiltinTool = z.infer<typeof builtinTool>;

export const mcpTransports = ["streamable-http", "sse"] as const;

const serverName = z
  .string()
  .max(63)
  .regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, "must match [A-Za-z_][A-Za-z0-9_-]*");

/** A tool's name as MCP servers spell them (letters, digits, `_`, `-`, `.`, `/`). */
const toolName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_./-]+$/, "must be a tool name (letters, digits, _ - . /)");

export const headerSecretKeyRef = z.object({
  name: z.string().min(1).describe("Secret name, in the crew's namespace"),
  key: z.string().min(1).describe("Key in the Secret"),
});

export const mcpHeader = z.object({
  name: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name"),
  value: z.string().max(8192).optional().describe("The header's value, in clear in the Crew"),
  valueFrom: z
    .object({ secretKeyRef: headerSecretKeyRef })
    .optional()
    .describe(
      "The header's value from a Secret (Kubernetes mode); `kubecrew dev` reads it from the variable secretEnvName() names",
    ),
});
export type McpHeader = z.infer<typeof mcpHeader>;

export const httpUrl = z
  .string()
  .max(2048)
  .regex(/^https?:\/\/[^\s#]+$/, "must be an http(s) URL without a #fragment");

export const mcpServer = z.object({
  name: serverName.describe("Name agents use in `mcps` (`<name>` or `<name>#<tool>`)"),
  url: httpUrl.describe("The server's endpoint (streamable HTTP: usually …/mcp; SSE: usually …/sse)"),
  transport: z.enum(mcpTransports).default("streamable-http"),
  headers: z.array(mcpHeader).max(MAX_HEADERS).default([]).describe("Sent with every request (e.g. Authorization)"),
  tools: z.array(toolName).max(200).optional().describe("Allow-list: only these of the server's tools are offered"),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(600)
    .default(DEFAULT_MCP_TIMEOUT_SECONDS)
    .describe("Connecting, listing tools and each tool call time out after this long"),
});
export type McpServer = z.infer<typeof mcpServer>;

/** CrewAI's MCP reference: an http(s) URL or a `spec.mcpServers` name, with an optional `#tool`. */
export const mcpReference = z
  .string()
  .max(2048)
  .regex(
    /^(https?:\/\/[^\s#]+|[A-Za-z_][A-Za-z0-9_-]*)(#[A-Za-z0-9_./-]+)?$/,
    "must be an http(s) URL or the name of a spec.mcpServers entry, optionally followed by #<tool>",
  );

/** A host pattern: `api.example.com`, `*.example.com` (any subdomain), with an optional `:port`. */
export const hostPattern = z
  .string()
  .max(253)
  .regex(
    /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?$/,
    "must be a host name, optionally *.-prefixed and :port-suffixed",
  );

export const toolPolicy = z.object({
  allowedHosts: z
    .array(hostPattern)
    .max(MAX_ALLOWED_HOSTS)
    .default([])
    .describe("Hosts http_request may call (`*.example.com` for subdomains); none when empty"),
  requireApproval: z
    .array(approvalRule)
    .max(MAX_APPROVAL_RULES)
    .default([])
    .describe(
      "Tool calls a person approves before they are made (POST /resume with tool_call_id): an app action (gmail/send_email), an app (gmail) or its write actions (gmail:write), an MCP tool (server#tool, server#*), http_request (http_request:POST for one method)",
    ),
});
export type ToolPolicy = z.infer<typeof toolPolicy>;

export interface ParsedReference {
  /** The URL, or the mcpServers name. */
  target: string;
  isUrl: boolean;
  tool?: string;
}

export function parseMcpReference(reference: string): ParsedReference {
  const hash = reference.indexOf("#");
  const target = hash < 0 ? reference : reference.slice(0, hash);
  const tool = hash < 0 ? undefined : reference.slice(hash + 1);
  return { target, isUrl: /^https?:\/\//.test(target), ...(tool ? { tool } : {}) };
}

/** Problems of an agent's tool settings against the crew's mcpServers (the rest is the schema's). */
export function agentToolProblems(agent: { name: string; mcps: string[] }, servers: McpServer[]): string[] {
  const names = new Set(servers.map((s) => s.name));
  const problems: string[] = [];
  for (const ref of agent.mcps) {
    const parsed = parseMcpReference(ref);
    if (parsed.isUrl) continue;
    if (!names.has(parsed.target)) {
      problems.push(`agent "${agent.name}" uses MCP server "${parsed.target}", which is not in spec.mcpServers`);
      continue;
    }
    const server = servers.find((s) => s.name === parsed.target)!;
    if (parsed.tool && server.tools && !server.tools.includes(parsed.tool)) {
      problems.push(
        `agent "${agent.name}" selects tool "${parsed.tool}" of MCP server "${server.name}", which its tools allow-list leaves out`,
      );
    }
  }
  return problems;
}

export function mcpServerProblems(servers: McpServer[]): string[] {
  const problems: string[] = [];
  const names = servers.map((s) => s.name);
  for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i))) {
    problems.push(`duplicate MCP server name "${name}"`);
  }
  for (const s of servers) {
    s.headers.forEach((h, i) => {
      if ((h.value === undefined) === (h.valueFrom === undefined)) {
        problems.push(`MCP server "${s.name}": header ${i} ("${h.name}") needs exactly one of value and valueFrom`);
      }
    });
  }
  return problems;
}

/**
 * The environment variable a header's secretKeyRef is handed to the runner in: the controller sets it on the task
 * pod from the Secret; `kubecrew dev` passes its own environment through, so there it is set by the user.
 * Secret names and keys become upper case, other characters `_` (e.g. mcp-token/token → KUBECREW_SECRET_MCP_TOKEN_TOKEN).
 */
export function secretEnvName(ref: { name: string; key: string }): string {
  return `KUBECREW_SECRET_${ref.name}_${ref.key}`.toUpperCase().replace(/[^A-Z0-9_]/g, "_");
}
