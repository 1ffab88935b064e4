import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localPolicy } from "../core/outbound/policy.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { resolveTaskTools } from "../core/task-tools.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../test/support/mcp-servers.ts";
import { runToolCall } from "./run-tool-call.ts";
import { testAssignment } from "./test-assignment.ts";

const deps = { env: {}, fetch: createOutboundClient(localPolicy).fetch };

/** A task of an agent without a model whose only job is one call. */
function toolTask(
  toolCall: { tool: string; arguments: string },
  agent: Partial<TaskAssignment["agent"]>,
  allowedHosts: string[] = [],
): TaskAssignment {
  const a = testAssignment({ llm: null });
  const withTool = { ...a.agent, role: "Tool call", ...agent };
  // The sources as the controller resolves them from the agent's mcps (core/assignment.ts).
  const policy = { mcpServers: [], toolPolicy: { allowedHosts, requireApproval: [] } };
  const task = { name: "fetch", description: "d", expectedOutput: "e", asyncExecution: false, humanInput: false };
  return {
    ...a,
    task: { ...a.task, name: "fetch", toolCall },
    agent: withTool,
    tools: resolveTaskTools(policy, withTool, task),
  };
}

let http: Server;
let origin: string;
let mcp: FixtureMcpServer;
const seen: string[] = [];

beforeAll(async () => {
  http = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" }).end('{"price": 42}');
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  mcp = await startFixtureMcpServer();
});

afterAll(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await mcp.stop();
});

describe("runToolCall: one tool, no model", () => {
  it("calls http_request once with the arguments, on an agent with no model, and the answer is the output", async () => {
    const steps: unknown[] = [];
    const args = JSON.stringify({ method: "GET", url: `${origin}/quote?item=tea` });
    const outcome = await runToolCall(
      toolTask({ tool: "http_request", arguments: args }, { tools: ["http_request"] }, ["127.0.0.1"]),
      { ...deps, onStep: (s) => steps.push(s) },
    );
    expect(outcome.error).toBeUndefined();
    expect(seen).toEqual(["GET /quote?item=tea"]);
    expect(outcome).toMatchObject({ taskName: "fetch", agent: "Tool call", stepCount: 1, toolsUsed: ["http_request"] });
    expect(outcome.output).toMatch(/^HTTP 200 OK\n/);
    expect(outcome.output).toContain('{"price": 42}');
    expect(outcome.tokenUsage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    expect(outcome.model).toBeUndefined();
    expect(steps).toEqual([expect.objectContaining({ kind: "tool", tool: "http_request", input: args })]);
  });

  it("calls one tool of an MCP server", async () => {
    const outcome = await runToolCall(
      toolTask({ tool: "lookup", arguments: '{"key": "tide"}' }, { mcps: [`${mcp.url}#lookup`] }),
      deps,
    );
    expect(outcome).toMatchObject({ output: "value of tide", toolsUsed: ["lookup"] });
    expect(outcome.error).toBeUndefined();
  });

  it("fails the task when the tool fails, the host is not allowed, or the arguments are not an object", async () => {
    const broken = await runToolCall(
      toolTask({ tool: "broken", arguments: "{}" }, { mcps: [`${mcp.url}#broken`] }),
      deps,
    );
    expect(broken.error).toBe('The tool "broken" failed: the broken tool is broken');
    const before = seen.length;
    const refused = await runToolCall(
      toolTask(
        { tool: "http_request", arguments: JSON.stringify({ method: "GET", url: `${origin}/x` }) },
        { tools: ["http_request"] },
        ["api.example.com"],
      ),
      deps,
    );
    expect(refused.error).toMatch(/^The tool "http_request" failed: .*127\.0\.0\.1/);
    expect(seen.length).toBe(before);
    const list = await runToolCall(
      toolTask({ tool: "http_request", arguments: "[1]" }, { tools: ["http_request"] }),
      deps,
    );
    expect(list.error).toBe("The arguments of http_request: not a JSON object");
    const args = JSON.stringify({ method: "POST", url: `${origin}/held` });
    const held = toolTask({ tool: "http_request", arguments: args }, { tools: ["http_request"] }, ["127.0.0.1"]);
    const holding = await runToolCall(
      { ...held, tools: { ...held.tools, requireApproval: ["http_request:POST"] } },
      deps,
    );
    expect(holding.error).toBe(
      'The call of "http_request" needs a person\'s approval (toolPolicy.requireApproval): not made',
    );
    expect(seen.length).toBe(before);
    const missing = await runToolCall(toolTask({ tool: "lookup", arguments: "{}" }, { tools: ["http_request"] }), deps);
    expect(missing.error).toBe('The agent "writer" offers no tool "lookup" to call');
  });
});
