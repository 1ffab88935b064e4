import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from "../../e2e/support/webhook-receiver.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

// Issue 28, defect 7: `kubecrew dev` signed no webhook. Every delivery is signed now, with a secret generated per crew
// that the crew's owner reads with an org token; a receiver on loopback checks each one as a user's receiver would.
let dev: RunningDev;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  dev = await startTestDev({
    "quick.yaml": crewYaml("quick", "mock", { tasks: 2 }),
    "other.yaml": crewYaml("other", "mock", { tasks: 1 }),
  });
});
afterAll(async () => {
  await dev?.stop();
  receiver?.close();
});

const get = (path: string, token?: string) =>
  fetch(`${dev.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

async function signingSecret(crew: string): Promise<string> {
  const res = await get(`/crews/${crew}/webhook-signing`, tokens.org);
  expect(res.status).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  const body = (await res.json()) as { secret: string; generated: boolean };
  expect(body).toEqual({ generated: true, secret: expect.stringMatching(/^[0-9a-f]{64}$/) });
  return body.secret;
}

/** What a receiver does: recompute the HMAC over "<timestamp>.<body>" and compare in constant time. */
function verifies(hook: ReceivedHook, secret: string): boolean {
  const timestamp = String(hook.headers["x-kubecrew-timestamp"] ?? "");
  const signature = String(hook.headers["x-kubecrew-signature"] ?? "");
  const expected = "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${hook.body}`).digest("hex");
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}

async function run(crew: string, tasks: number): Promise<ReceivedHook[]> {
  const res = await fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({
      inputs: { topic: "tides" },
      taskWebhookUrl: `${receiver.url}/task`,
      stepWebhookUrl: `${receiver.url}/step`,
      crewWebhookUrl: `${receiver.url}/crew`,
    }),
  });
  const { kickoff_id } = (await res.json()) as { kickoff_id: string };
  const mine = () =>
    receiver.hooks.filter((h) => (JSON.parse(h.body) as { kickoff_id: string }).kickoff_id === kickoff_id);
  // The crew's end and each task's; the deliveries race, so they may come in any order.
  const done = () =>
    mine().filter((h) => h.path === "/crew").length === 1 && mine().filter((h) => h.path === "/task").length === tasks;
  await waitFor(async () => (done() ? true : undefined));
  return mine();
}

describe("webhook signatures in kubecrew dev", () => {
  it("signs every task, step and crew webhook with the crew's generated secret, which its org token reads", async () => {
    const secret = await signingSecret("quick");
    const hooks = await run("quick", 2);
    expect(
      hooks
        .map((h) => h.path)
        .filter((p) => p !== "/step")
        .sort(),
    ).toEqual(["/crew", "/task", "/task"]);
    expect(hooks.some((h) => h.path === "/step")).toBe(true);
    for (const hook of hooks) {
      expect(hook.headers["x-kubecrew-signature"], hook.path).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(verifies(hook, secret), hook.path).toBe(true);
      expect(Math.abs(Number(hook.headers["x-kubecrew-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    }
    // The same secret for the life of the process.
    expect(await signingSecret("quick")).toBe(secret);
  });

  it("gives each crew its own secret: another crew's deliveries do not verify with it", async () => {
    const quick = await signingSecret("quick");
    const other = await signingSecret("other");
    expect(other).not.toBe(quick);
    const hooks = await run("other", 1);
    for (const hook of hooks) {
      expect(verifies(hook, other), hook.path).toBe(true);
      expect(verifies(hook, quick), hook.path).toBe(false);
    }
  });

  it("answers the secret to org tokens only", async () => {
    const user = await get("/crews/quick/webhook-signing", tokens.alice);
    expect(user.status).toBe(403);
    expect(await user.json()).toEqual({
      error: "Forbidden",
      message: "Only an org token may read the crew's webhook signing secret",
    });
    expect((await get("/crews/quick/webhook-signing")).status).toBe(401);
    expect((await get("/crews/quick/webhook-signing", tokens.other)).status).toBe(401);
    expect((await get("/crews/nope/webhook-signing", tokens.org)).status).toBe(404);
  });

  it("is in the OpenAPI document, with its answers", async () => {
    const doc = (await (await get("/openapi.json")).json()) as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } }>;
    };
    for (const path of ["/webhook-signing", "/crews/{crew}/webhook-signing"]) {
      expect(Object.keys(doc.paths[path]?.get?.responses ?? {}), path).toEqual(
        expect.arrayContaining(["200", "401", "403", "404", "503"]),
      );
    }
  });
});
