import { describe, expect, it } from "vitest";
import { resolveToolRef } from "./tool-calls.ts";

describe("a tool action's ref on kubecrew's tools", () => {
  it("is http_request, one tool of an MCP server by URL, or one app action", () => {
    expect(resolveToolRef("http_request")).toEqual({
      ok: true,
      target: { agent: { tools: ["http_request"] }, tool: "http_request" },
    });
    expect(resolveToolRef("https://mcp.example.com/mcp#lookup")).toEqual({
      ok: true,
      target: { agent: { mcps: ["https://mcp.example.com/mcp#lookup"] }, tool: "lookup" },
    });
    expect(resolveToolRef("gmail/send_email")).toEqual({
      ok: true,
      target: { agent: { apps: ["gmail/send_email"] }, tool: "gmail__send_email" },
    });
  });

  it("refuses a Python class, a server without its tool, a whole app, a connection and the unknown", () => {
    const problem = (ref: string) => {
      const r = resolveToolRef(ref);
      return r.ok ? undefined : r.problem;
    };
    expect(problem("my_project.tools:SearchTool")).toMatch(/is a Python tool class, which only the crewai runtime/);
    expect(problem("https://mcp.example.com/mcp")).toMatch(/names an MCP server but no tool: add #<tool>/);
    expect(problem("gmail")).toMatch(/"gmail" is not a tool kubecrew has/);
    expect(problem("gmail/send_email@work")).toMatch(/names a connection: .* drop @work/);
    expect(problem("gmail/no_such_action")).toMatch(/is not a tool kubecrew has: flows call http_request, /);
    expect(problem("search")).toMatch(/is not a tool kubecrew has/);
  });
});
