import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// Issue 32 item 4 with an MCP tool in kubecrew dev: a crew whose toolPolicy.requireApproval names `kb#lookup`, a tool
// of an MCP server built with the official SDK. The agent's loop stops before the call — the server is sent no tool
// call while it waits — and an org admin decides (the call acts with no user's account): approved, the next run
// makes the call exactly once; denied, the server never receives it and the model is told who denied it and why.

let dev: RunningDev;
let llm: LlmFixture;
let kb: FixtureMcpServer;

const crew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: librarian }
spec:
  llm: { provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }
  mcpServers: [{ name: kb, url: "${kb.url}" }]
  toolPolicy: { requireApproval: ["kb#lookup"] }
  agents:
    - { name: reader, role: Reader, goal: Look things up, mcps: ["kb#lookup"], maxIter: 5 }
  tasks:
    - { name: look, agent: reader, description: "Look the key up", expectedOutput: "What the knowledge base said" }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

beforeAll(async () => {
  [llm, kb] = await Promise.all([startLlmFixture(), startFixtureMcpServer()]);
  dev = await startTestDev({ "librarian.yaml": crew() });
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await Promise.all([llm?.stop(), kb?.stop()]);
});

const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

interface Status {
  status: string;
  error?: string;
  pending_tool_calls?: { task_id: string; tool_call_id: string; tool: string; arguments: unknown; acts_as?: string }[];
  result?: { output: string };
}

async function status(id: string): Promise<Status> {
  const res = await fetch(`${dev.url}/crews/librarian/status/${id}`, { headers: auth(tokens.alice) });
  return (await res.json()) as Status;
}

async function kickoff(): Promise<string> {
  const res = await fetch(`${dev.url}/crews/librarian/kickoff`, {
    method: "POST",
    headers: auth(tokens.alice),
    body: JSON.stringify({ inputs: {} }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

const held = (id: string) =>
  waitFor(async () => {
    const s = await status(id);
    if (s.status === "error") throw new Error(`execution failed: ${s.error}`);
    return s.pending_tool_calls?.length ? s.pending_tool_calls : undefined;
  });

const finished = (id: string) =>
  waitFor(async () => {
    const s = await status(id);
    return s.status === "running" ? undefined : s;
  });

async function resume(body: Record<string, unknown>, token = tokens.org) {
  const res = await fetch(`${dev.url}/crews/librarian/resume`, {
    method: "POST",
    headers: auth(token),
    body: JSON.stringify(body),
  });
  return { code: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("an MCP tool call that toolPolicy.requireApproval holds (server#tool)", () => {
  it("reaches the MCP server only after an org admin approves it, exactly once", async () => {
    kb.calls.length = 0;
    llm.enqueue(toolCalls({ name: "lookup", input: { key: "tides" } }), quoteToolResults());
    const id = await kickoff();
    const [call] = await held(id);
    expect(call).toEqual({
      task_id: "look",
      tool_call_id: expect.any(String),
      tool: "kb#lookup",
      arguments: { key: "tides" },
      requested_at: expect.any(String),
    });
    // The task's run is over and the server was sent no tool call.
    await new Promise((r) => setTimeout(r, 500));
    expect(kb.calls).toEqual([]);

    const ask = { execution_id: id, task_id: "look", tool_call_id: call!.tool_call_id, human_feedback: "" };
    // It acts with no user's account: an org admin decides it. Alice, who started the run, is told so; bob may not
    // see the execution at all.
    expect(await resume({ ...ask, is_approve: true }, tokens.alice)).toEqual({
      code: 403,
      body: {
        error: "Forbidden",
        message:
          "Only an org admin (an org token, or an admin signed in to the console) may approve or deny the call of " +
          "kb#lookup: it acts with the crew's own means, not a user's account",
      },
    });
    expect((await resume({ ...ask, is_approve: true }, tokens.bob)).code).toBe(404);
    expect(kb.calls).toEqual([]);
    expect(await resume({ ...ask, is_approve: true })).toEqual({
      code: 200,
      body: { status: "resumed", message: 'Tool call "kb#lookup" approved; task "look" goes on' },
    });
    const done = await finished(id);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(done.result!.output).toContain("Tool lookup returned: value of tides");
    expect(kb.calls).toEqual([{ tool: "lookup", arguments: { key: "tides" } }]);

    // Decided once: a second decision is refused and nothing more reaches the server.
    expect((await resume({ ...ask, is_approve: true })).code).toBe(400);
    await new Promise((r) => setTimeout(r, 300));
    expect(kb.calls).toHaveLength(1);
  }, 60_000);

  it("never reaches the MCP server when denied; the model is told who denied it and why", async () => {
    kb.calls.length = 0;
    llm.enqueue(toolCalls({ name: "lookup", input: { key: "secrets" } }), quoteToolResults());
    const id = await kickoff();
    const [call] = await held(id);
    const denied = await resume({
      execution_id: id,
      task_id: "look",
      tool_call_id: call!.tool_call_id,
      is_approve: false,
      human_feedback: "not that key",
    });
    expect(denied).toEqual({
      code: 200,
      body: { status: "resumed", message: 'Tool call "kb#lookup" denied; task "look" goes on' },
    });
    const done = await finished(id);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(toolResultsSent(llm.requests.at(-1)!.body)).toEqual([
      { name: "lookup", text: "denied by org: not that key" },
    ]);
    expect(done.result!.output).toContain("denied by org: not that key");
    expect(kb.calls).toEqual([]);
  }, 60_000);
});
