import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";

// Issue 32 item 4 in kubecrew dev: a crew whose toolPolicy.requireApproval holds http_request's POSTs. The agent's
// loop stops before the call (the target on loopback receives nothing), the execution waits with the held call
// (arguments redacted), and POST /resume with tool_call_id decides — an org admin, since the call acts with no user's
// account (not even the user who started the run may): approved, the call is made once and the task completes with
// its result; denied, the target never sees it and the model is told who denied it and why. Stop and
// runner.humanInputTimeoutSeconds end a held call's wait with the call never made.

const SECRET = "Bearer s3cret-header-value";
let dev: RunningDev;
let llm: LlmFixture;
let target: Server;
let targetHost: string;
const received: { method: string; url: string; body: string }[] = [];
const logs: string[] = [];

const crew = (name = "outreach", runner = "") => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  llm: { provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }
  toolPolicy:
    allowedHosts: ["${targetHost}"]
    requireApproval: ["http_request:POST"]
  agents:
    - { name: sender, role: Sender, goal: Send the note, tools: [http_request], maxIter: 5 }
  tasks:
    - { name: send, agent: sender, description: "Post the note", expectedOutput: "What the server said" }
  runner: { retries: 0, taskTimeoutSeconds: 60${runner} }
`;

beforeAll(async () => {
  llm = await startLlmFixture();
  target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method!, url: req.url!, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(201, { "content-type": "text/plain" }).end("note stored");
    });
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetHost = `127.0.0.1:${(target.address() as AddressInfo).port}`;
  const log = createLogger({ level: "debug" }, { write: (line: string) => void logs.push(line) });
  dev = await startTestDev(
    { "outreach.yaml": crew(), "hasty.yaml": crew("hasty-outreach", ", humanInputTimeoutSeconds: 2") },
    { log },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  target?.closeAllConnections();
  await new Promise((resolve) => target?.close(resolve));
  await llm?.stop();
});

const auth = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

interface HeldCall {
  task_id: string;
  tool_call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  requested_at: string;
}
interface Status {
  status: string;
  error?: string;
  pending_tool_calls?: HeldCall[];
  result?: { output: string };
}

async function status(id: string, token = tokens.alice, crewName = "outreach"): Promise<Status> {
  const res = await fetch(`${dev.url}/crews/${crewName}/status/${id}`, { headers: auth(token) });
  return (await res.json()) as Status;
}

async function kickoff(token = tokens.alice, crewName = "outreach"): Promise<string> {
  const res = await fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: auth(token),
    body: JSON.stringify({ inputs: {} }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

const held = (id: string, crewName = "outreach") =>
  waitFor(async () => {
    const s = await status(id, tokens.alice, crewName);
    if (s.status === "error") throw new Error(`execution failed: ${s.error}`);
    return s.pending_tool_calls?.length ? s.pending_tool_calls : undefined;
  });

const finished = (id: string) =>
  waitFor(async () => {
    const s = await status(id);
    return s.status === "running" ? undefined : s;
  });

/** POST /resume, by default with the org token: an org admin decides a call that acts with no user's account. */
async function resume(body: Record<string, unknown>, token = tokens.org) {
  const res = await fetch(`${dev.url}/crews/outreach/resume`, {
    method: "POST",
    headers: auth(token),
    body: JSON.stringify(body),
  });
  return { code: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The model's turn calling http_request with a POST, and (unless the run will never go on) its turn after it. */
function scriptPost(note: string, goesOn = true) {
  llm.enqueue(
    toolCalls({
      name: "http_request",
      input: { method: "POST", url: `http://${targetHost}/notes`, headers: { Authorization: SECRET }, body: note },
    }),
    ...(goesOn ? [quoteToolResults()] : []),
  );
}

describe("a tool call that toolPolicy.requireApproval holds", () => {
  it("reaches its target only after approval, once; the task then completes with the call's result", async () => {
    received.length = 0;
    scriptPost("hello approved");
    const id = await kickoff();
    const [call] = await held(id);
    expect(call).toMatchObject({
      task_id: "send",
      tool: "http_request:POST",
      arguments: { method: "POST", url: `http://${targetHost}/notes`, headers: { Authorization: "[redacted]" } },
    });
    // The task's run is over and the target was never called.
    await new Promise((r) => setTimeout(r, 500));
    expect(received).toEqual([]);
    expect(JSON.stringify(await status(id))).not.toContain(SECRET);

    const ask = { execution_id: id, task_id: "send", tool_call_id: call!.tool_call_id, human_feedback: "" };
    // Another user is told the execution is not there; alice, who started it and sees the call, is told who may
    // decide it: the call acts with no user's account, so an org admin.
    expect((await resume({ ...ask, is_approve: true }, tokens.bob)).code).toBe(404);
    expect(await resume({ ...ask, is_approve: true }, tokens.alice)).toEqual({
      code: 403,
      body: {
        error: "Forbidden",
        message:
          "Only an org admin (an org token, or an admin signed in to the console) may approve or deny the call of " +
          "http_request:POST: it acts with the crew's own means, not a user's account",
      },
    });
    expect((await status(id)).pending_tool_calls).toHaveLength(1);
    expect(received).toEqual([]);

    const approved = await resume({ ...ask, is_approve: true });
    expect(approved).toEqual({
      code: 200,
      body: { status: "resumed", message: 'Tool call "http_request:POST" approved; task "send" goes on' },
    });
    const done = await finished(id);
    expect(done.status).toBe("completed");
    expect(done.result!.output).toContain("Tool http_request returned: HTTP 201");
    expect(done.result!.output).toContain("note stored");
    expect(received).toEqual([{ method: "POST", url: "/notes", body: "hello approved" }]);

    // Decided once: a second answer is refused.
    const again = await resume({ ...ask, is_approve: false });
    expect(again.code).toBe(400);
    expect(received).toHaveLength(1);
    expect(logs.join("\n")).not.toContain(SECRET);
  }, 60_000);

  it("never reaches its target when denied; the model is told who denied it and why", async () => {
    received.length = 0;
    scriptPost("hello denied");
    const id = await kickoff();
    const [call] = await held(id);
    const ask = { execution_id: id, task_id: "send", tool_call_id: call!.tool_call_id };
    const denied = await resume({ ...ask, is_approve: false, human_feedback: "not to this server" });
    expect(denied.code).toBe(200);
    const done = await finished(id);
    expect(done.status).toBe("completed");
    expect(received).toEqual([]);
    const results = toolResultsSent(llm.requests.at(-1)!.body);
    expect(results).toEqual([{ name: "http_request", text: "denied by org: not to this server" }]);
    expect(done.result!.output).toContain("denied by org: not to this server");
  }, 60_000);

  it("answers 400 for a call that does not wait and 404 for an unknown task or execution", async () => {
    received.length = 0;
    scriptPost("hello unknown");
    const id = await kickoff();
    const [call] = await held(id);
    const ask = { execution_id: id, task_id: "send", human_feedback: "", is_approve: true };
    expect((await resume({ ...ask, tool_call_id: "call-that-was-never-made" })).code).toBe(400);
    expect((await resume({ ...ask, task_id: "nope", tool_call_id: call!.tool_call_id })).code).toBe(404);
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await resume({ ...ask, execution_id: unknown, tool_call_id: call!.tool_call_id })).code).toBe(404);
    // Without tool_call_id the wait is not a task's answer: AMP's 400.
    expect(await resume(ask)).toMatchObject({
      code: 400,
      body: { message: "Execution is not in pending human input state" },
    });
    expect((await resume({ ...ask, tool_call_id: call!.tool_call_id })).code).toBe(200);
    expect((await finished(id)).status).toBe("completed");
    expect(received).toHaveLength(1);
  }, 60_000);

  it("stop while a call is held ends the run stopped, the call never made; a later decision is a 400", async () => {
    received.length = 0;
    const requestsBefore = llm.requests.length;
    scriptPost("hello stopped", false);
    const id = await kickoff();
    const [call] = await held(id);
    const stop = await fetch(`${dev.url}/crews/outreach/stop/${id}`, { method: "POST", headers: auth(tokens.alice) });
    expect(stop.status).toBe(200);
    expect(await finished(id)).toMatchObject({ status: "error", error: "Execution stopped" });
    const late = await resume({
      execution_id: id,
      task_id: "send",
      tool_call_id: call!.tool_call_id,
      is_approve: true,
      human_feedback: "",
    });
    expect(late).toMatchObject({ code: 400, body: { message: "Execution is not in pending human input state" } });
    await new Promise((r) => setTimeout(r, 500));
    expect(received).toEqual([]);
    expect(llm.requests.length - requestsBefore).toBe(1); // the turn that made the call; the run never went on
    expect((await status(id)).status).toBe("error");
  }, 60_000);

  it("a held call nobody decides fails the run after runner.humanInputTimeoutSeconds, saying so", async () => {
    received.length = 0;
    scriptPost("hello forgotten", false);
    const id = await kickoff(tokens.alice, "hasty-outreach");
    await held(id, "hasty-outreach");
    const final = await waitFor(async () => {
      const s = await status(id, tokens.alice, "hasty-outreach");
      return s.status === "running" ? undefined : s;
    }, 15_000);
    expect(final).toMatchObject({
      status: "error",
      error:
        'Task "send" waited 2s for a person to decide its call of http_request:POST and nobody answered ' +
        "(runner.humanInputTimeoutSeconds)",
    });
    expect(received).toEqual([]);
  }, 60_000);
});
