import { describe, expect, it } from "vitest";
import { refusedMcpUrls, refusalMessage } from "./mcp-url-refusals.ts";
import { clusterPolicy, runnerPolicy } from "./outbound/policy.ts";
import { mcpUrlServerName } from "./task-tools.ts";

const spec = (urls: { servers?: string[]; mcps?: string[] }) => ({
  mcpServers: (urls.servers ?? []).map((url, i) => ({
    name: `s${i}`,
    url,
    transport: "streamable-http" as const,
    headers: [],
    timeoutSeconds: 30,
  })),
  agents: [{ mcps: urls.mcps ?? [] }] as never,
});

describe("refusedMcpUrls", () => {
  it("names each refused server URL and agent mcps URL with its field and the policy's reason", () => {
    const refusals = refusedMcpUrls(
      spec({
        servers: ["https://mcp.example.com/mcp", "http://169.254.169.254/latest/mcp?key=k"],
        mcps: ["s0#search", "http://[fe80::1]:3000/mcp#echo", "https://tools.example.org/mcp"],
      }),
      runnerPolicy,
    );
    expect(refusals).toEqual([
      {
        field: "spec.mcpServers[1].url",
        server: "s1",
        url: "http://169.254.169.254/latest/mcp",
        reason: "169.254.169.254 is a cloud metadata address; calls to it are refused",
      },
      {
        field: "spec.agents[0].mcps[1]",
        server: mcpUrlServerName("http://[fe80::1]:3000/mcp"),
        url: "http://[fe80::1]:3000/mcp",
        reason: "fe80::1 is a linkLocal address; calls to it are refused",
      },
    ]);
    expect(refusalMessage(refusals[0]!)).toBe(
      'MCP server "s1" (http://169.254.169.254/latest/mcp): 169.254.169.254 is a cloud metadata address; calls to it are refused',
    );
  });

  it("judges with the policy it is given: loopback is the task pod itself for the runner, refused by the cluster's", () => {
    const loopback = spec({ mcps: ["http://127.0.0.1:3001/mcp", "http://localhost:3001/mcp#echo"] });
    expect(refusedMcpUrls(loopback, runnerPolicy)).toEqual([]);
    expect(refusedMcpUrls(loopback, clusterPolicy).map((r) => r.reason)).toEqual([
      "127.0.0.1 is a loopback address; calls to it are refused here",
      "localhost is a loopback name; calls to it are refused here",
    ]);
  });
});
