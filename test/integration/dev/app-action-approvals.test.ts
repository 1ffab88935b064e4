import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startGoogleFixture, type GoogleFixture } from "../../support/provider-fixtures/google.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { appsSigningKey } from "../integrations/apps-harness.ts";
import { appChains, chainCrewName, chainCrewYaml, toolOf } from "../integrations/app-chains.ts";
import {
  internalApiKey,
  returnUrl,
  startProviderAndService,
  TestBrowser,
  type ProviderAndService,
} from "../integrations/harness.ts";

// Issue 32: approving an action of a connected app, end to end under kubecrew dev with the real integrations service
// (real redis-server, oidc-provider standing in for Google's sign-in) and Gmail's API fixture. alice connects Gmail,
// her crew's toolPolicy.requireApproval holds gmail/send_email: Gmail receives nothing while the call waits; only
// alice, whose account it would use, may decide (bob and the org token are told the execution is not there); approved,
// Gmail receives exactly one request, with her access token; denied, none, and the model is told who denied it. Each
// decision is a step of the task — in the event stream and as a step webhook — after a tool_call_held event.

const gmail = appChains.find((chain) => chain.app === "gmail")!;
const tool = toolOf(gmail);
const crew = chainCrewName(gmail);
const redisUrl = inject("redisUrl");
let google: GoogleFixture;
let llm: LlmFixture;
let integrations: ProviderAndService;
let dev: RunningDev;
let hooks: Server;
let hookUrl: string;
const hookBodies: Record<string, unknown>[] = [];
let accessToken: string;

beforeAll(async () => {
  [google, llm] = await Promise.all([startGoogleFixture(), startLlmFixture()]);
  integrations = await startProviderAndService({
    redisUrl,
    prefix: `test:app-action-approvals:${Date.now()}:`,
    extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, KUBECREW_GOOGLE_API_BASE_URL: google.url },
  });
  hooks = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      hookBodies.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => hooks.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
  const approval = "  toolPolicy: { requireApproval: [gmail/send_email] }\n";
  dev = await startTestDev(
    { [`${crew}.yaml`]: chainCrewYaml(gmail, llm.baseURL, approval) },
    {
      env: {
        KUBECREW_APPS_URL: `${integrations.service.url}/v1/mcp`,
        KUBECREW_APPS_SIGNING_KEY: appsSigningKey,
        KUBECREW_OAUTH_INTERNAL_API_KEY: internalApiKey,
      },
    },
  );

  // alice connects Gmail through the real sign-in flow.
  integrations.provider.account = { sub: "sub-alice", email: "alice@example.com" };
  const link = (await (
    await call(`/connections/gmail`, tokens.alice, { method: "POST", body: { returnUrl } })
  ).json()) as { url: string };
  const before = integrations.provider.issuedTokens().length;
  const end = await new TestBrowser().open(link.url);
  expect(new URL(end.location!).searchParams.get("status")).toBe("connected");
  accessToken = integrations.provider.issuedTokens()[before]!;
}, 90_000);
afterAll(async () => {
  await dev?.stop();
  await integrations?.stop();
  await Promise.all([google?.stop(), llm?.stop()]);
  hooks?.close();
});

function call(path: string, token: string, init: { method?: string; body?: unknown } = {}) {
  return fetch(`${dev.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}

interface Status {
  status: string;
  error?: string;
  result?: { output: string };
  pending_tool_calls?: { task_id: string; tool_call_id: string; tool: string; arguments: unknown; acts_as?: string }[];
}
const status = async (id: string): Promise<Status> =>
  (await (await call(`/crews/${crew}/status/${id}`, tokens.alice)).json()) as Status;

/** What Gmail's API received of the send operation so far. */
const sends = () => google.requests.filter((r) => r.operation === gmail.receives.operation);

async function kickoffHeld() {
  llm.enqueue(toolCalls({ name: tool, input: gmail.input }), quoteToolResults());
  const res = await call(`/crews/${crew}/kickoff`, tokens.alice, {
    body: { inputs: {}, stepWebhookUrl: hookUrl },
  });
  expect(res.status).toBe(200);
  const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
  const [held] = await waitFor(async () => {
    const s = await status(id);
    if (s.status !== "running") throw new Error(`the execution ended: ${JSON.stringify(s)}`);
    return s.pending_tool_calls?.length ? s.pending_tool_calls : undefined;
  }, 45_000);
  return { id, held: held! };
}

const resume = (id: string, toolCallId: string, approve: boolean, token: string, feedback = "") =>
  call(`/crews/${crew}/resume`, token, {
    body: { execution_id: id, task_id: "act", tool_call_id: toolCallId, is_approve: approve, human_feedback: feedback },
  });

const finished = (id: string) =>
  waitFor(async () => {
    const s = await status(id);
    return s.status === "running" ? undefined : s;
  }, 45_000);

/** The execution's event stream, read to its end: each event's name and data. */
async function events(id: string) {
  const text = await (await call(`/crews/${crew}/status/${id}/events`, tokens.alice)).text();
  return text
    .split("\n\n")
    .filter((frame) => frame.includes("data: "))
    .map((frame) => ({
      event: /^event: (.*)$/m.exec(frame)![1]!,
      data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as Record<string, unknown> & {
        step?: Record<string, unknown>;
      },
    }));
}

describe("approving a connected app's action (gmail/send_email)", () => {
  it("Gmail receives nothing until alice approves, then exactly one request with her token; only she may decide", async () => {
    const before = sends().length;
    const { id, held } = await kickoffHeld();
    expect(held).toMatchObject({ task_id: "act", tool: "gmail/send_email", acts_as: "alice", arguments: gmail.input });
    await new Promise((r) => setTimeout(r, 500)); // the task's run has ended; nothing may reach Gmail meanwhile
    expect(sends()).toHaveLength(before);

    // Not bob: to him the execution is not there. Not the org token, which sees it but acts with no one's account:
    // it is told the call is alice's to decide.
    expect((await resume(id, held.tool_call_id, true, tokens.bob)).status).toBe(404);
    const refused = await resume(id, held.tool_call_id, true, tokens.org);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: "Forbidden",
      message:
        "Only alice, whose connected account the call of gmail/send_email would act with, may approve or deny it",
    });
    expect(sends()).toHaveLength(before);

    expect((await resume(id, held.tool_call_id, true, tokens.alice)).status).toBe(200);
    const done = await finished(id);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(done.result!.output).toMatch(gmail.answers);
    const made = sends().slice(before);
    expect(made).toHaveLength(1);
    expect(made[0]!.token).toBe(accessToken);
    expect(gmail.receives.carrying(made[0]!)).toEqual(gmail.receives.is);
    expect(google.violations).toEqual([]);

    // The wait and the decision in the task's events: held, then alice's approval as a step, then the resumed run.
    const all = await events(id);
    const heldAt = all.findIndex((e) => e.event === "tool_call_held");
    const decidedAt = all.findIndex((e) => e.data.step?.kind === "decision");
    expect(heldAt).toBeGreaterThan(0);
    expect(decidedAt).toBeGreaterThan(heldAt);
    expect(all[heldAt]!.data).toMatchObject({ tool_call_id: held.tool_call_id, acts_as: "alice", revision: 0 });
    expect(all[decidedAt]!.data.step).toMatchObject({
      kind: "decision",
      tool: "gmail/send_email",
      tool_call_id: held.tool_call_id,
      acts_as: "alice",
      decision: "approved",
      output: "approved by alice",
      decided_by: { kind: "user", subject: "alice" },
      decided_at: expect.any(String),
    });
    const toolStep = all.findIndex((e) => e.data.step?.kind === "tool");
    expect(toolStep).toBeGreaterThan(decidedAt); // the call was made after the decision

    // And as a step webhook, in the task's order.
    const hooked = await waitFor(async () => {
      const mine = hookBodies.filter((b) => b.kickoff_id === id);
      return mine.some((b) => (b.step as { kind?: string }).kind === "tool") ? mine : undefined;
    }, 20_000);
    const kinds = hooked.map((b) => (b.step as { kind: string }).kind);
    expect(kinds.indexOf("decision")).toBeGreaterThanOrEqual(0);
    expect(kinds.indexOf("decision")).toBeLessThan(kinds.indexOf("tool"));
    expect(hooked.find((b) => (b.step as { kind: string }).kind === "decision")!.step).toMatchObject({
      tool_call_id: held.tool_call_id,
      decided_by: { kind: "user", subject: "alice" },
    });

    // Decided once: nothing more reaches Gmail.
    expect((await resume(id, held.tool_call_id, true, tokens.alice)).status).toBe(400);
    await new Promise((r) => setTimeout(r, 500));
    expect(sends().slice(before)).toHaveLength(1);
  }, 120_000);

  it("denied by alice: Gmail never receives the mail and the model is told who denied it and why", async () => {
    const before = sends().length;
    const { id, held } = await kickoffHeld();
    const denied = await resume(id, held.tool_call_id, false, tokens.alice, "Not before the board meets");
    expect(denied.status).toBe(200);
    const done = await finished(id);
    expect(done.status).toBe("completed");
    expect(sends()).toHaveLength(before);
    const told = toolResultsSent(llm.requests.at(-1)!.body);
    expect(told).toEqual([{ name: tool, text: "denied by alice: Not before the board meets" }]);
    const decision = (await events(id)).find((e) => e.data.step?.kind === "decision");
    expect(decision?.data.step).toMatchObject({
      decision: "denied",
      output: "denied by alice: Not before the board meets",
      feedback: "Not before the board meets",
    });
  }, 120_000);
});
