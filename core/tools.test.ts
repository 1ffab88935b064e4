import { describe, expect, it } from "vitest";
import { crewSpec } from "./crew-resource.ts";
import { mcpUrlServerName, resolveTaskTools } from "./task-tools.ts";
import { parseMcpReference, secretEnvName } from "./tools.ts";

const tasks = [{ name: "look", agent: "scout", description: "Look", expectedOutput: "Facts" }];
const scout = { name: "scout", role: "Scout", goal: "Look things up" };

function problems(spec: unknown): string[] {
  const result = crewSpec.safeParse(spec);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

describe("a crew's tools", () => {
  it("fills the defaults: streamable-http, 30 s, maxIter 20, no hosts allowed", () => {
    const spec = crewSpec.parse({
      agents: [{ ...scout, mcps: ["docs"], tools: ["http_request"] }],
      tasks,
      mcpServers: [{ name: "docs", url: "http://docs.internal/mcp" }],
    });
    expect(spec.mcpServers[0]).toEqual({
      name: "docs",
      url: "http://docs.internal/mcp",
      transport: "streamable-http",
      headers: [],
      timeoutSeconds: 30,
    });
    expect(spec.agents[0]).toMatchObject({ maxIter: 20, mcps: ["docs"], tools: ["http_request"] });
    expect(spec.toolPolicy).toEqual({ allowedHosts: [], requireApproval: [] });
  });

  it("rejects unknown built-in tools, bad references and hosts, and a maxIter out of range, naming the field", () => {
    expect(
      problems({
        agents: [{ ...scout, tools: ["shell"], mcps: ["ftp://x", "two words"], maxIter: 0 }],
        tasks,
        toolPolicy: { allowedHosts: ["https://api.example.com"] },
      }),
    ).toEqual([
      "toolPolicy.allowedHosts.0: must be a host name, optionally *.-prefixed and :port-suffixed",
      'agents.0.tools.0: Invalid input: expected "http_request"',
      "agents.0.mcps.0: must be an http(s) URL or the name of a spec.mcpServers entry, optionally followed by #<tool>",
      "agents.0.mcps.1: must be an http(s) URL or the name of a spec.mcpServers entry, optionally followed by #<tool>",
      "agents.0.maxIter: Too small: expected number to be >=1",
    ]);
  });

  it("rejects a reference to an undefined server, a #tool its allow-list leaves out, duplicate servers and bad headers", () => {
    expect(
      problems({
        agents: [{ ...scout, mcps: ["docs#search", "nowhere", "https://mcp.example.com/mcp#anything"] }],
        tasks,
        mcpServers: [
          { name: "docs", url: "http://docs.internal/mcp", tools: ["fetch"], headers: [{ name: "X-Key" }] },
          {
            name: "docs",
            url: "http://other/mcp",
            headers: [{ name: "A", value: "1", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }],
          },
        ],
      }),
    ).toEqual([
      ': duplicate MCP server name "docs"',
      ': MCP server "docs": header 0 ("X-Key") needs exactly one of value and valueFrom',
      ': MCP server "docs": header 0 ("A") needs exactly one of value and valueFrom',
      ': agent "scout" selects tool "search" of MCP server "docs", which its tools allow-list leaves out',
      ': agent "scout" uses MCP server "nowhere", which is not in spec.mcpServers',
    ]);
  });

  it("parses CrewAI references: URL or name, with an optional #tool", () => {
    expect(parseMcpReference("https://mcp.example.com/mcp#search")).toEqual({
      target: "https://mcp.example.com/mcp",
      isUrl: true,
      tool: "search",
    });
    expect(parseMcpReference("docs")).toEqual({ target: "docs", isUrl: false });
  });

  it("resolves an agent's references into one entry per server, narrowing allow-lists by #tool", () => {
    const spec = crewSpec.parse({
      agents: [
        { ...scout, mcps: ["docs#fetch", "docs#read", "https://mcp.example.com:8443/mcp#echo", "wiki", "wiki#x"] },
      ],
      tasks: [{ ...tasks[0], tools: ["fetch", "echo"] }],
      mcpServers: [
        { name: "docs", url: "http://docs.internal/mcp", tools: ["fetch", "read", "write"] },
        { name: "wiki", url: "http://wiki.internal/sse", transport: "sse", tools: ["x", "y"] },
      ],
      toolPolicy: { allowedHosts: ["*.example.com"] },
    });
    const resolved = resolveTaskTools(spec, spec.agents[0]!, spec.tasks[0]!);
    expect(resolved.mcpServers.map((s) => [s.name, s.transport, s.tools])).toEqual([
      ["docs", "streamable-http", ["fetch", "read"]],
      [mcpUrlServerName("https://mcp.example.com:8443/mcp"), "streamable-http", ["echo"]],
      ["wiki", "sse", ["x", "y"]],
    ]);
    expect(resolved.allowedHosts).toEqual(["*.example.com"]);
    expect(resolved.only).toEqual(["fetch", "echo"]);
  });

  it("names the variable a header's Secret reaches the runner in", () => {
    expect(secretEnvName({ name: "mcp-token", key: "token" })).toBe("KUBECREW_SECRET_MCP_TOKEN_TOKEN");
    expect(secretEnvName({ name: "a.b", key: "api.key" })).toBe("KUBECREW_SECRET_A_B_API_KEY");
  });
});
