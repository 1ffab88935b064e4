import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);
const quiet = () => ({ ...process.env, CREWAI_DISABLE_TELEMETRY: "true", OTEL_SDK_DISABLED: "true" });

/** Runs Python in the CrewAI environment; CrewAI's console may print before it, so the answer is the last line. */
async function lastLine(python: string, code: string[], ...args: string[]): Promise<string> {
  const { stdout } = await run(python, ["-c", code.join("\n"), ...args], { env: quiet() });
  return stdout.trim().split("\n").at(-1) ?? "";
}

const AGENT = [
  "from crewai import Agent, LLM",
  "from crewai.utilities.string_utils import sanitize_tool_name",
  "a = Agent(role='R', goal='g', backstory='b', llm=LLM(model='openai/x', base_url='http://127.0.0.1:9', api_key='k'))",
];

/** CrewAI's own delegation tool's name as its native tool calling sends it, read from the package. */
export function crewaiDelegateTool(python: string): Promise<string> {
  return lastLine(python, [
    ...AGENT,
    "from crewai.tools.agent_tools.agent_tools import AgentTools",
    "print(sanitize_tool_name(AgentTools(agents=[a]).tools()[0].name))",
  ]);
}

/**
 * The names CrewAI offers an MCP server's tools by (its URL's host and path before the tool's name), asked of the
 * server through the adapter's own MCP code: by each tool's name on the server.
 */
export async function crewaiMcpToolNames(python: string, url: string): Promise<Record<string, string>> {
  const line = await lastLine(
    python,
    [
      ...AGENT,
      "import json, sys",
      "from kubecrew_crewai.launch import McpServer",
      "from kubecrew_crewai.mcp_servers import mcp_tools",
      "s = McpServer('server', sys.argv[1], 'streamable-http', {}, None, 10)",
      "print(json.dumps({t.original_name: sanitize_tool_name(t.name) for t in mcp_tools(a, [s], None)}))",
    ],
    url,
  );
  return JSON.parse(line) as Record<string, string>;
}

/** The name CrewAI offers tool `tool` of the MCP server at `url` by, from the package's own naming (no call made). */
export function crewaiMcpToolName(python: string, url: string, tool: string): Promise<string> {
  return lastLine(
    python,
    [
      "import sys",
      "from crewai.mcp.tool_resolver import MCPToolResolver",
      "from crewai.utilities.string_utils import sanitize_tool_name",
      "print(sanitize_tool_name(f'{MCPToolResolver._extract_server_name(sys.argv[1])}_{sys.argv[2]}'))",
    ],
    url,
    tool,
  );
}
