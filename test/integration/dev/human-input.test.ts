import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { expectAmpRun, HITL_CREW, runAmpClient, WEBHOOK_TOKEN } from "../../support/amp-hitl.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { expectWebhooksMovedOnResume } from "../../support/resume-webhooks.ts";
import { startWebhookReceiver } from "../../e2e/support/webhook-receiver.ts";

// Issue 32: a humanInput task waits for a person in kubecrew dev, as CrewAI AMP's "Pending Human Input" — an AMP
// client written as CrewAI's documentation shows (Python requests) sends the answer back, approves the revision and
// reads completed; the wait's rules (who may answer, once, stop, timeout) through the crew API.

const blog = HITL_CREW("blog");
const hasty = `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: hasty }
spec:
  llm: { provider: mock, model: mock }
  agents: [{ name: writer, role: Writer, goal: Write }]
  tasks: [{ name: draft, agent: writer, description: Draft, expectedOutput: A post, humanInput: true }]
  runner: { retries: 0, humanInputTimeoutSeconds: 2 }
`;

const logs: string[] = [];
let dev: RunningDev;

beforeAll(async () => {
  const log = createLogger({ level: "debug" }, { write: (line: string) => void logs.push(line) });
  dev = await startTestDev({ "blog.yaml": blog, "hasty.yaml": hasty }, { log });
});
afterAll(async () => {
  await dev?.stop();
});

const json = { "content-type": "application/json" };
const auth = (token: string) => ({ authorization: `Bearer ${token}`, ...json });

async function kickoff(crew: string, token = tokens.org): Promise<string> {
  const res = await fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: auth(token),
    body: JSON.stringify({ inputs: { topic: "tide pools" } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

interface Status {
  status: string;
  error?: string;
  pending_human_input?: { task_id: string; output: string; requested_at: string };
}
async function status(crew: string, id: string, token = tokens.org): Promise<Status> {
  const res = await fetch(`${dev.url}/crews/${crew}/status/${id}`, { headers: auth(token) });
  return (await res.json()) as Status;
}
const pending = (crew: string, id: string, token = tokens.org) =>
  waitFor(async () => ((await status(crew, id, token)).pending_human_input ? true : undefined));

async function resume(crew: string, body: Record<string, unknown>, token = tokens.org) {
  const res = await fetch(`${dev.url}/crews/${crew}/resume`, {
    method: "POST",
    headers: auth(token),
    body: JSON.stringify(body),
  });
  return { code: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("an AMP client of a crew with a humanInput task", () => {
  it("receives the wait, sends the answer back, approves the revision and reads completed", async () => {
    expectAmpRun(await runAmpClient(`${dev.url}/crews/blog`, tokens.org));
    expect(logs.join("\n")).not.toContain(WEBHOOK_TOKEN);
  }, 120_000);
});

describe("webhook URLs given again on /resume", () => {
  it("the stream sends human_input_requested; the URLs a resume gives replace the kickoff's, later hooks go there only", async () => {
    await expectWebhooksMovedOnResume(`${dev.url}/crews/blog`, tokens.org);
  }, 60_000);
});

describe("the human-input webhook's credentials", () => {
  it("basic: the receiver gets Authorization: Basic with the username and password the kickoff gave", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const res = await fetch(`${dev.url}/crews/blog/kickoff`, {
        method: "POST",
        headers: auth(tokens.org),
        body: JSON.stringify({
          inputs: { topic: "tide pools" },
          humanInputWebhook: {
            url: `${receiver.url}/hitl`,
            authentication: { strategy: "basic", username: "reviewer", password: "p4ss:word" },
          },
        }),
      });
      const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
      const hook = await waitFor(async () => receiver.hooks.find((h) => h.body.includes(id)));
      expect(hook.headers.authorization).toBe(`Basic ${Buffer.from("reviewer:p4ss:word").toString("base64")}`);
      expect(hook.headers["x-kubecrew-event"]).toBe("human_input");
      expect(JSON.parse(hook.body)).toMatchObject({ execution_id: id, task_id: "draft" });
      expect(logs.join("\n")).not.toContain("p4ss:word");
    } finally {
      receiver.close();
    }
  });

  it("refuses a username with a colon, and a strategy AMP does not define (400)", async () => {
    for (const authentication of [
      { strategy: "basic", username: "a:b", password: "x" },
      { strategy: "apikey", token: "x" },
    ]) {
      const res = await fetch(`${dev.url}/crews/blog/kickoff`, {
        method: "POST",
        headers: auth(tokens.org),
        body: JSON.stringify({
          inputs: { topic: "t" },
          humanInputWebhook: { url: "http://127.0.0.1:9/h", authentication },
        }),
      });
      expect(res.status).toBe(400);
    }
  });
});

describe("who may answer a wait, and how often", () => {
  it("a user token cannot resume another user's execution (404); its own user and the org token can", async () => {
    const id = await kickoff("blog", tokens.alice);
    await pending("blog", id, tokens.alice);
    const ask = { execution_id: id, task_id: "draft", human_feedback: "", is_approve: true };
    expect(await resume("blog", ask, tokens.bob)).toEqual({
      code: 404,
      body: { error: "Execution not found", message: `No execution found with ID: ${id}` },
    });
    expect((await resume("blog", ask, tokens.org)).code).toBe(200);
  });

  it("of resumes sent at once, exactly one is recorded; the others are told nothing waits", async () => {
    const id = await kickoff("blog");
    await pending("blog", id);
    const ask = { execution_id: id, task_id: "draft", human_feedback: "go", is_approve: true };
    const answers = await Promise.all(Array.from({ length: 6 }, () => resume("blog", ask)));
    expect(answers.map((a) => a.code).sort()).toEqual([200, 400, 400, 400, 400, 400]);
  });

  it("sends an answer back at most runner.humanInputMaxRetries times, then asks for approval", async () => {
    const id = await kickoff("blog");
    await pending("blog", id);
    const back = { execution_id: id, task_id: "draft", human_feedback: "again", is_approve: false };
    expect((await resume("blog", back)).code).toBe(200);
    await waitFor(async () => ((await status("blog", id)).pending_human_input ? undefined : true));
    await pending("blog", id);
    const refused = await resume("blog", back);
    expect(refused.code).toBe(400);
    expect(refused.body.message).toContain("runner.humanInputMaxRetries");
    expect((await resume("blog", { ...back, is_approve: true })).body.status).toBe("resumed");
  });

  it("answers 404 for an unknown task or execution, 400 for a malformed body, 401 without a token", async () => {
    const id = await kickoff("blog");
    await pending("blog", id);
    const ask = { execution_id: id, task_id: "nope", human_feedback: "", is_approve: true };
    expect(await resume("blog", ask)).toMatchObject({ code: 404, body: { error: "Task not found" } });
    const unknown = { ...ask, task_id: "draft", execution_id: "6f1c9a52-5c1e-4d84-9d8e-0f0e7d3b1a2c" };
    expect((await resume("blog", unknown)).code).toBe(404);
    const malformed = await resume("blog", { execution_id: id, task_id: "draft" });
    expect(malformed).toMatchObject({ code: 400, body: { error: "Bad Request" } });
    expect(String(malformed.body.message)).toContain("is_approve");
    const anonymous = await fetch(`${dev.url}/crews/blog/resume`, { method: "POST", headers: json, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect((await resume("blog", { ...ask, task_id: "publish" })).body.message).toBe(
      "Execution is not in pending human input state",
    );
  });
});

describe("a wait that ends without an answer", () => {
  it("stop works while waiting: the execution is stopped and nothing waits any more", async () => {
    const id = await kickoff("blog");
    await pending("blog", id);
    const stop = await fetch(`${dev.url}/crews/blog/stop/${id}`, { method: "POST", headers: auth(tokens.org) });
    expect(stop.status).toBe(200);
    await waitFor(async () => ((await status("blog", id)).status === "error" ? true : undefined));
    expect(await status("blog", id)).toMatchObject({ status: "error", error: "Execution stopped" });
    const late = await resume("blog", { execution_id: id, task_id: "draft", human_feedback: "", is_approve: true });
    expect(late.code).toBe(400);
  });

  it("a forgotten wait fails after runner.humanInputTimeoutSeconds, saying so", async () => {
    const id = await kickoff("hasty");
    await pending("hasty", id);
    await waitFor(async () => ((await status("hasty", id)).status === "error" ? true : undefined), 15_000);
    const final = await status("hasty", id);
    expect(final.error).toContain("runner.humanInputTimeoutSeconds");
    expect(final.error).toContain('Task "draft"');
  });
});
