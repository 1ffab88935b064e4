import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";
import { DEFAULT_RETRY_POLICY } from "../../../runner/retry.ts";
import { runTask } from "../../../runner/run-task.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import {
  callTools,
  startLlmFixture,
  toolsOffered,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// Each real AI SDK provider through the tool loop: the fixture speaks each API's tool-call format, the tools are a
// real MCP server (built with the official SDK) and the built-in http_request (calling that same server's origin).
let llm: LlmFixture;
let mcp: FixtureMcpServer;
const { fetch } = createOutboundClient(localPolicy);
const retry = { ...DEFAULT_RETRY_POLICY, maxRetries: 0 };

beforeAll(async () => {
  llm = await startLlmFixture();
  mcp = await startFixtureMcpServer();
});
afterAll(async () => {
  await llm?.stop();
  await mcp?.stop();
});
beforeEach(() => {
  llm.requests.length = 0;
});

describe.each([
  { provider: "openai" as const, env: { OPENAI_API_KEY: "sk-test" } },
  { provider: "anthropic" as const, env: { ANTHROPIC_API_KEY: "sk-ant-test" } },
  { provider: "openai-compatible" as const, env: {} },
])("provider $provider with tools", ({ provider, env }) => {
  it("offers the tools, runs the calls, sends the results back and answers", async () => {
    const llmConfig: LlmConfig = { provider, model: "tool-model", baseURL: llm.baseURL };
    const a = testAssignment({ llm: llmConfig });
    const host = new URL(mcp.url).host;
    llm.enqueue(callTools(), callTools());
    const outcome = await runTask(
      {
        ...a,
        agent: { ...a.agent, tools: ["http_request"] },
        tools: {
          mcpServers: [
            {
              name: "kb",
              url: mcp.url,
              transport: "streamable-http",
              headers: [],
              tools: ["lookup"],
              timeoutSeconds: 5,
            },
          ],
          allowedHosts: [host],
        },
      },
      { env, fetch, retry },
    );
    expect(outcome.error).toBeUndefined();
    expect(llm.requests).toHaveLength(2);
    const offered = toolsOffered(llm.requests[0]!.body);
    expect(offered.map((t) => [t.name, t.schema.required])).toEqual([
      ["lookup", ["key"]],
      ["http_request", ["method", "url"]],
    ]);
    // call-tools made up {key: "x"} and {method: "GET", url: "x"}: the second is not a URL, and the model is told so.
    expect(toolResultsSent(llm.requests[1]!.body)).toEqual([
      { name: "lookup", text: "value of x" },
      { name: "http_request", text: 'Tool error: "x" is not an absolute URL' },
    ]);
    expect(outcome.output).toBe(
      "Fixture answer from tool results.\n\nTool lookup returned: value of x\n\n" +
        'Tool http_request returned: Tool error: "x" is not an absolute URL',
    );
    expect(outcome.tokenUsage.totalTokens).toBeGreaterThan(0);
    expect(outcome.model).toBe(`${provider}/tool-model`);
  });
});
