import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from "../../e2e/support/webhook-receiver.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

// Issue 33: a flow kickoff takes the crew kickoff's webhook URLs. taskWebhookUrl is POSTed once per method run that
// completed, stepWebhookUrl once per agent step of a method run, crewWebhookUrl once when the run ended; signed as a
// crew's, with a secret of the flow's, retried alike.
const FLOW = `schema: crewai.flow/v1
name: HookFlow
state:
  type: json_schema
  json_schema:
    type: object
    properties: { topic: { type: string } }
    required: [topic]
methods:
  prepare:
    start: true
    do: { call: expression, expr: "'notes on ' + state.topic" }
  write:
    listen: prepare
    do:
      call: agent
      with: { role: Writer, goal: Write one line, backstory: Brief., input: "\${outputs.prepare}" }
  route:
    listen: write
    router: true
    emit: [long, short]
    do: { call: expression, expr: "size(outputs.write.raw) > 0 ? 'long' : 'short'" }
  finish:
    listen: long
    do: { call: expression, expr: "'done: ' + outputs.prepare" }
`;
const BROKEN = `schema: crewai.flow/v1
name: BrokenFlow
methods:
  first:
    start: true
    do: { call: expression, expr: "'one'" }
  divide:
    listen: first
    do: { call: expression, expr: "1 / 0" }
`;

let dev: RunningDev;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  dev = await startTestDev({ "hook-flow.yaml": FLOW, "broken-flow.yaml": BROKEN });
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  receiver?.close();
});

const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

async function kickoff(flow: string, body: object): Promise<{ status: number; body: Body }> {
  const res = await fetch(`${dev.url}/flows/${flow}/kickoff`, { method: "POST", headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Body };
}

function verifies(hook: ReceivedHook, secret: string): boolean {
  const timestamp = String(hook.headers["x-kubecrew-timestamp"] ?? "");
  const signature = String(hook.headers["x-kubecrew-signature"] ?? "");
  const expected = "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${hook.body}`).digest("hex");
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}

const hooksOf = (id: string) => receiver.hooks.filter((h) => (JSON.parse(h.body) as Body).kickoff_id === id);

describe("flow webhooks in kubecrew dev", () => {
  it("sends each completed method and the run's end, signed with the flow's secret, retrying a 503", async () => {
    const signing = await fetch(`${dev.url}/flows/hook-flow/webhook-signing`, { headers });
    expect(signing.status).toBe(200);
    expect(signing.headers.get("cache-control")).toBe("no-store");
    const { secret } = (await signing.json()) as { secret: string };
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const user = await fetch(`${dev.url}/flows/hook-flow/webhook-signing`, {
      headers: { authorization: `Bearer ${tokens.alice}` },
    });
    expect(user.status).toBe(403);

    receiver.failNext = 1; // the first delivery is answered 503 and sent again
    const started = await kickoff("hook-flow", {
      inputs: { topic: "tides" },
      meta: { ticket: 42 },
      taskWebhookUrl: `${receiver.url}/method`,
      crewWebhookUrl: `${receiver.url}/flow`,
    });
    expect(started.status).toBe(200);
    const id = started.body.kickoff_id as string;
    const hooks = await waitFor(async () => {
      const mine = hooksOf(id);
      return mine.filter((h) => h.path === "/method").length === 4 && mine.some((h) => h.path === "/flow")
        ? mine
        : undefined;
    }, 60_000);
    const bodies = hooks.map((h) => ({
      path: h.path,
      event: h.headers["x-kubecrew-event"],
      body: JSON.parse(h.body) as Body,
    }));
    const methods = bodies.filter((b) => b.path === "/method");
    expect(methods.map((m) => m.body.method).sort()).toEqual(["finish", "prepare", "route", "write"]);
    expect(new Set(methods.map((m) => m.event))).toEqual(new Set(["method"]));
    const byMethod = Object.fromEntries(methods.map((m) => [m.body.method as string, m.body]));
    expect(byMethod.prepare).toMatchObject({
      kickoff_id: id,
      flow: "hook-flow",
      task_id: "prepare",
      activation: "prepare#1",
      output: "notes on tides",
      meta: { ticket: 42 },
    });
    expect(byMethod.write!.output).toEqual(expect.any(String));
    expect(byMethod.write!.json_dict).toMatchObject({ raw: byMethod.write!.output });
    expect(byMethod.route).toMatchObject({ output: "long", outcome: "long" });
    const final = bodies.filter((b) => b.path === "/flow");
    expect(final).toHaveLength(1);
    expect(final[0]!.event).toBe("flow");
    expect(final[0]!.body).toMatchObject({
      kickoff_id: id,
      flow: "hook-flow",
      status: "completed",
      result: "done: notes on tides",
      outputs: { prepare: "notes on tides", route: "long", finish: "done: notes on tides" },
      error: null,
      meta: { ticket: 42 },
    });
    expect(final[0]!.body.execution_time).toBeGreaterThan(0);
    // The same run's status says the same final output.
    const status = (await (await fetch(`${dev.url}/flows/hook-flow/status/${id}`, { headers })).json()) as Body;
    expect(status.result.output).toBe(final[0]!.body.result);
    const ids = hooks.map((h) => String(h.headers["x-kubecrew-delivery"]));
    expect(new Set(ids).size).toBe(ids.length); // the retried delivery arrived once
    expect(ids).toContain(`${id}/flow`);
    for (const hook of hooks) expect(verifies(hook, secret), hook.path).toBe(true);
    // Tracing off (no OTLP endpoint): no trace context goes out with them.
    for (const hook of hooks) expect(hook.headers.traceparent, hook.path).toBeUndefined();
    // Not the crews' secret: a flow's key is its own.
    const crewSecret = createHmac("sha256", "other").digest("hex");
    expect(verifies(hooks[0]!, crewSecret)).toBe(false);
  });

  it("sends each agent step of a method run to stepWebhookUrl, as a crew's steps with the method as task", async () => {
    const { secret } = (await (await fetch(`${dev.url}/flows/hook-flow/webhook-signing`, { headers })).json()) as {
      secret: string;
    };
    const started = await kickoff("hook-flow", {
      inputs: { topic: "reefs" },
      meta: { ticket: 43 },
      taskWebhookUrl: `${receiver.url}/method`,
      stepWebhookUrl: `${receiver.url}/step`,
    });
    expect(started.status).toBe(200);
    const id = started.body.kickoff_id as string;
    // The write method's webhook carries its output; its steps come before the run is over, one place at a time.
    await waitFor(
      async () => (hooksOf(id).filter((h) => h.path === "/method").length === 4 ? true : undefined),
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    const steps = hooksOf(id).filter((h) => h.path === "/step");
    expect(steps.length).toBeGreaterThan(0);
    const bodies = steps.map((h) => JSON.parse(h.body) as Body);
    for (const [i, body] of bodies.entries()) {
      expect(steps[i]!.headers["x-kubecrew-event"]).toBe("step");
      expect(verifies(steps[i]!, secret)).toBe(true);
      // Only the agent method took steps (the CEL methods take none).
      expect(body).toEqual({
        kickoff_id: id,
        flow: "hook-flow",
        task_id: "write",
        method: "write",
        activation: "write#1",
        attempt: 1,
        step: expect.objectContaining({
          index: i,
          kind: expect.any(String),
          started_at: expect.any(String),
          duration_ms: expect.any(Number),
        }),
        meta: { ticket: 43 },
      });
    }
    const ids = steps.map((h) => String(h.headers["x-kubecrew-delivery"]));
    expect(new Set(ids).size).toBe(ids.length);
    for (const delivery of ids) expect(delivery).toMatch(new RegExp(`^${id}/step:write#1:`));
  });

  it("sends the error when a run fails, and only what was asked for", async () => {
    const started = await kickoff("broken-flow", { inputs: {}, crewWebhookUrl: `${receiver.url}/flow` });
    const id = started.body.kickoff_id as string;
    const [end] = await waitFor(async () => {
      const mine = hooksOf(id);
      return mine.length ? mine : undefined;
    }, 30_000);
    const body = JSON.parse(end!.body) as Body;
    expect(end!.path).toBe("/flow");
    expect(body).toMatchObject({ kickoff_id: id, status: "error", result: null, outputs: null });
    expect(body.error).toContain("division by zero");
    const status = (await (await fetch(`${dev.url}/flows/broken-flow/status/${id}`, { headers })).json()) as Body;
    expect(status).toMatchObject({ status: "error", error: body.error });
    await new Promise((r) => setTimeout(r, 500));
    expect(hooksOf(id)).toHaveLength(1); // no method webhooks: no taskWebhookUrl
  });

  it("refuses webhook URLs the outbound policy refuses, naming each field (400)", async () => {
    const refused = await kickoff("hook-flow", {
      inputs: { topic: "x" },
      taskWebhookUrl: "http://169.254.169.254/latest/meta-data/",
      crewWebhookUrl: `${receiver.url}/flow`,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("Bad Request");
    expect(refused.body.details).toEqual([{ field: "taskWebhookUrl", message: expect.any(String) }]);
    const malformed = await kickoff("hook-flow", { inputs: { topic: "x" }, crewWebhookUrl: "not a url" });
    expect(malformed.status).toBe(400);
  });
});
