import { describe, expect, it } from "vitest";
import { crewSpec } from "./crew-resource.ts";
import { mcpUrlServerName, resolveTaskTools, taskTools } from "./task-tools.ts";

const scout = { name: "scout", role: "Scout", goal: "Look things up" };
const look = { name: "look", agent: "scout", description: "Look", expectedOutput: "Facts" };

function resolve(mcps: string[]) {
  const spec = crewSpec.parse({ agents: [{ ...scout, mcps }], tasks: [look] });
  return resolveTaskTools(spec, spec.agents[0]!, spec.tasks[0]!);
}

/** What OpenAI and Anthropic accept as a tool name, and Gemini too (a letter or `_` first). */
const providerToolName = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

describe("the name of an MCP server given by URL in mcps", () => {
  const urls = [
    "http://127.0.0.1:8000/mcp",
    "http://localhost:3001/mcp",
    "https://mcp.example.com/mcp",
    "https://mcp.example.com:8443/v1/mcp",
    "http://[::1]:9000/sse",
    "http://[fd00:1::2]/mcp",
    "https://user:pass@docs.example.com/mcp?key=s3cret",
    `https://${"very-long-label.".repeat(14)}example.com/${"deep/".repeat(200)}mcp`,
    "https://1password.example/mcp",
  ];

  it("is readable (host, port, path), starts with a letter and fits the mcpServers name rule", () => {
    expect(mcpUrlServerName("http://127.0.0.1:8000/mcp")).toMatch(/^mcp-127-0-0-1-8000-mcp-[0-9a-f]{8}$/);
    expect(mcpUrlServerName("https://mcp.example.com:8443/v1/mcp")).toMatch(
      /^mcp-example-com-8443-v1-mcp-[0-9a-f]{8}$/,
    );
    expect(mcpUrlServerName("https://mcp.example.com/mcp")).toMatch(/^mcp-example-com-mcp-[0-9a-f]{8}$/);
    for (const url of urls) {
      const name = mcpUrlServerName(url);
      expect(name, url).toMatch(/^[A-Za-z][A-Za-z0-9-]*$/);
      expect(name.length, url).toBeLessThanOrEqual(41);
      // The tool-name form used when two servers offer a tool of one name keeps most of a long tool name.
      expect(`${name}_${"t".repeat(22)}`, url).toMatch(providerToolName);
    }
  });

  it("keeps query and credentials out of the readable part", () => {
    const name = mcpUrlServerName("https://user:pass@docs.example.com/mcp?key=s3cret");
    expect(name).toMatch(/^docs-example-com-mcp-[0-9a-f]{8}$/);
  });

  it("is stable, and differs for two URLs on one host (port, path, scheme, query)", () => {
    expect(mcpUrlServerName("http://127.0.0.1:8000/mcp")).toBe(mcpUrlServerName("http://127.0.0.1:8000/mcp"));
    const sameHost = [
      "http://127.0.0.1:8000/mcp",
      "http://127.0.0.1:8001/mcp",
      "http://127.0.0.1:8000/other/mcp",
      "http://127.0.0.1:8000/other-mcp",
      "https://127.0.0.1:8000/mcp",
      "http://127.0.0.1:8000/mcp?team=a",
      "http://127.0.0.1:8000/mcp?team=b",
    ];
    expect(new Set(sameHost.map(mcpUrlServerName)).size).toBe(sameHost.length);
  });
});

describe("resolving mcps given by URL", () => {
  it("gives an assignment the runner accepts (the name was the URL's host: '127.0.0.1:8000' was refused)", () => {
    const tools = resolve(["http://127.0.0.1:8000/mcp", "https://mcp.example.com/mcp#search"]);
    expect(taskTools.safeParse(tools).success).toBe(true);
    expect(tools.mcpServers.map((s) => [s.name, s.url, s.tools])).toEqual([
      [mcpUrlServerName("http://127.0.0.1:8000/mcp"), "http://127.0.0.1:8000/mcp", undefined],
      [mcpUrlServerName("https://mcp.example.com/mcp"), "https://mcp.example.com/mcp", ["search"]],
    ]);
  });

  it("keeps #tool selections: one server per URL, its selected tools, all of them when one reference has no #tool", () => {
    const url = "http://127.0.0.1:8000/mcp";
    const other = "http://127.0.0.1:8000/tools/mcp";
    const tools = resolve([`${url}#lookup`, `${other}#echo`, `${url}#slow`, other]);
    expect(tools.mcpServers.map((s) => [s.url, s.tools])).toEqual([
      [url, ["lookup", "slow"]],
      [other, undefined],
    ]);
    expect(new Set(tools.mcpServers.map((s) => s.name)).size).toBe(2);
    expect(taskTools.safeParse(tools).success).toBe(true);
  });
});
