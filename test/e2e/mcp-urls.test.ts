import { describe, expect, inject, it } from "vitest";
import { mcpUrlServerName } from "../../core/task-tools.ts";
import { quoteToolResults, startLlmFixture, toolCalls, toolsOffered, type LlmFixture } from "../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../support/mcp-servers.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { finalStatus, kickoff } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";

/**
 * CrewAI's URL form of `mcps` (`http://<host>:<port>/mcp`, with and without `#tool`) in task pods, against an MCP
 * server built with the official SDK: the task pod's runner accepts its assignment and the model calls the tools.
 * With the suite's own controller on the local node, and against the chart installed on kind.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;
let mcp: FixtureMcpServer;
/** The same server under a second path: two MCP URLs on one host. */
let second: string;

const crew = (name: string, mcps: string[]) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: scout, role: Scout, goal: "Find facts about {topic}", mcps: ${JSON.stringify(mcps)} }
  tasks:
    - { name: look, agent: scout, description: "Look {topic} up", expectedOutput: "Facts" }
  runner: { retries: 0 }
`;

const suite = crewSuite(kubeconfig, {
  prefix: "mcp-urls",
  before: async () => {
    const host = hostForPods();
    [llm, mcp] = await Promise.all([startLlmFixture(host), startFixtureMcpServer(host)]);
    second = mcp.url.replace(/\/mcp$/, "/second/mcp");
  },
  after: async () => {
    await llm?.stop();
    await mcp?.stop();
  },
  crews: () => [crew("whole-server", [mcp.url]), crew("picked-tools", [`${mcp.url}#lookup`, `${second}#lookup`])],
});

describe("an agent whose mcps are URLs, in a task pod", () => {
  it("is offered every tool of a server given by its URL alone, and its call reaches the server", async () => {
    const from = llm.requests.length;
    llm.enqueue(toolCalls({ name: "lookup", input: { key: "tides" } }), quoteToolResults());
    const id = await kickoff(suite.api, "whole-server");
    const final = await finalStatus(suite.api, "whole-server", id);
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result.output).toContain("Tool lookup returned: value of tides");
    const offered = toolsOffered(llm.requests[from]!.body).map((t) => t.name);
    expect(offered.sort()).toEqual(["broken", "huge", "lookup", "slow"]);
  });

  it("is offered only the #tool picked of each URL; two URLs on one host are two servers", async () => {
    const from = llm.requests.length;
    const secondLookup = `${mcpUrlServerName(second)}_lookup`;
    llm.enqueue(
      toolCalls({ name: "lookup", input: { key: "tides" } }, { name: secondLookup, input: { key: "moon" } }),
      quoteToolResults(),
    );
    const id = await kickoff(suite.api, "picked-tools");
    const final = await finalStatus(suite.api, "picked-tools", id);
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result.output).toContain("Tool lookup returned: value of tides");
    expect(final.result.output).toContain(`Tool ${secondLookup} returned: value of moon`);
    expect(toolsOffered(llm.requests[from]!.body).map((t) => t.name)).toEqual(["lookup", secondLookup]);
    expect(mcp.sessions.closed).toBe(mcp.sessions.opened);
  });
});
