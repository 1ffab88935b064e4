import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpUrlServerName } from "../../../core/task-tools.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolsOffered,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// `kubecrew dev` end to end with CrewAI's URL form of `mcps` (`http://127.0.0.1:<port>/mcp`, with and without
// `#tool`) against an MCP server built with the official SDK: the task runs and the model calls the server's tools.
// Before, the server's name was the URL's host (`127.0.0.1:<port>`) and every task failed its assignment's check.
let dev: RunningDev;
let llm: LlmFixture;
let kb: FixtureMcpServer;
/** The same server under a second path: two MCP URLs on one host. */
let second: string;

const crew = (name: string, mcps: string[]) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }
  agents:
    - { name: scout, role: Scout, goal: "Find facts about {topic}", mcps: ${JSON.stringify(mcps)}, maxIter: 5 }
  tasks:
    - { name: look, agent: scout, description: "Look up {topic}", expectedOutput: "Facts" }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

beforeAll(async () => {
  [llm, kb] = await Promise.all([startLlmFixture(), startFixtureMcpServer()]);
  second = kb.url.replace(/\/mcp$/, "/second/mcp");
  dev = await startTestDev({
    "whole.yaml": crew("whole-server", [kb.url]),
    "picked.yaml": crew("picked-tools", [`${kb.url}#lookup`, `${second}#lookup`]),
  });
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await Promise.all([llm?.stop(), kb?.stop()]);
});

interface Final {
  status: string;
  error?: string;
  result?: { output: string; tasks: { tools_used?: string[] }[] };
}

async function run(crewName: string): Promise<Final> {
  const res = await fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  expect(res.status).toBe(200);
  const { kickoff_id } = (await res.json()) as { kickoff_id: string };
  return waitFor(async () => {
    const s = (await (
      await fetch(`${dev.url}/crews/${crewName}/status/${kickoff_id}`, {
        headers: { authorization: `Bearer ${tokens.org}` },
      })
    ).json()) as Final;
    return s.status === "running" ? undefined : s;
  }, 30_000);
}

describe("kubecrew dev with MCP servers given by URL in mcps", () => {
  it("offers every tool of a server given by its URL alone, and the model's call reaches it", async () => {
    const from = llm.requests.length;
    llm.enqueue(toolCalls({ name: "lookup", input: { key: "tides" } }), quoteToolResults());
    const final = await run("whole-server");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result!.output).toContain("Tool lookup returned: value of tides");
    expect(final.result!.tasks[0]!.tools_used).toEqual(["lookup"]);
    const offered = toolsOffered(llm.requests[from]!.body).map((t) => t.name);
    expect(offered.sort()).toEqual(["broken", "huge", "lookup", "slow"]);
    expect(kb.sessions.closed).toBe(kb.sessions.opened);
  }, 60_000);

  it("offers only the #tool picked of each URL; two URLs on one host are two servers, each tool callable", async () => {
    const from = llm.requests.length;
    const secondLookup = `${mcpUrlServerName(second)}_lookup`;
    llm.enqueue(
      toolCalls({ name: "lookup", input: { key: "tides" } }, { name: secondLookup, input: { key: "moon" } }),
      quoteToolResults(),
    );
    const final = await run("picked-tools");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result!.output).toContain("Tool lookup returned: value of tides");
    expect(final.result!.output).toContain(`Tool ${secondLookup} returned: value of moon`);
    const offered = toolsOffered(llm.requests[from]!.body).map((t) => t.name);
    expect(offered).toEqual(["lookup", secondLookup]);
    // Names every provider accepts (OpenAI and Anthropic: [A-Za-z0-9_-]{1,64}; Gemini: a letter or _ first).
    for (const name of offered) expect(name).toMatch(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/);
  }, 60_000);
});
