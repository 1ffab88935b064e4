import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MemoryTokenStore } from "../../api/auth/memory-token-store.ts";
import { createKubernetesBackend, type KubernetesBackend } from "../../api/kubernetes-backend.ts";
import { startApi } from "../../api/server.ts";
import { silentLogger } from "../../core/logger.ts";
import { clusterPolicy } from "../../core/outbound/policy.ts";
import { appsControllerEnv, appsSigningKey, connectApp } from "../integration/integrations/apps-harness.ts";
import { appChains, chainCrewYaml, toolOf } from "../integration/integrations/app-chains.ts";
import { startProviderAndService, type ProviderAndService } from "../integration/integrations/harness.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../support/llm-fixture.ts";
import { startGoogleFixture, type GoogleFixture } from "../support/provider-fixtures/google.ts";
import { startRedis, type RedisServer } from "../support/redis.ts";
import { jobsOf, sleep, waitFor, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Issue 32 on a real control plane: approving an action of a connected app. The real integrations service (real
 * redis-server, oidc-provider standing in for Google's sign-in) serves the apps; Gmail's API is its fixture. alice has
 * connected Gmail; her crew's toolPolicy.requireApproval holds gmail/send_email, so the task's Job ends parked and
 * Gmail receives nothing; the wait's Event names the call and alice's account; bob's token gets 404, the org token 403;
 * approved by alice, a second Job sends exactly one mail with her access token; denied, Gmail receives none. Each
 * decision is a step in the execution's event stream. The controller runs here (its apps settings point at this
 * machine's loopback), so against the kind-installed chart the file is skipped, as the other own-controller suites.
 */
const kubeconfig = inject("kubeconfig");
const gmail = appChains.find((chain) => chain.app === "gmail")!;
const tool = toolOf(gmail);
const CREW = "apps-google";
const TOKENS = {
  org: "kco_e2e-approvals-org-token-000000000000",
  alice: "kcu_e2e-approvals-alice-token-0000000000",
  bob: "kcu_e2e-approvals-bob-token-000000000000",
};
let redis: RedisServer;
let google: GoogleFixture;
let llm: LlmFixture;
let integrations: ProviderAndService;
let system: OwnSystem;
let backend: KubernetesBackend;
let api: { url: string; stop(): Promise<void> };
let accessToken: string;

beforeAll(async () => {
  if (installed) return;
  [redis, google, llm] = await Promise.all([startRedis(), startGoogleFixture(), startLlmFixture()]);
  integrations = await startProviderAndService({
    redisUrl: redis.url,
    prefix: `test:e2e-app-approvals:${Date.now()}:`,
    extra: { KUBECREW_APPS_SIGNING_KEY: appsSigningKey, KUBECREW_GOOGLE_API_BASE_URL: google.url },
  });
  ({ accessToken } = await connectApp(integrations.service.url, integrations.provider, "alice", "google", "gmail"));
  system = await startOwnSystem(kubeconfig, "app-approvals", {
    crews: [chainCrewYaml(gmail, llm.baseURL, "  toolPolicy: { requireApproval: [gmail/send_email] }\n")],
    controller: { env: appsControllerEnv(integrations.service.url) },
  });
  // The crew API with user tokens (the system's own API has the org token only).
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  backend = await createKubernetesBackend({ kubeConfig: kc, namespace: system.namespace, log: silentLogger() });
  const tokens = new MemoryTokenStore();
  tokens.add(TOKENS.org, { kind: "org", crews: "*", subject: "e2e-org" });
  tokens.add(TOKENS.alice, { kind: "user", crews: "*", subject: "alice" });
  tokens.add(TOKENS.bob, { kind: "user", crews: "*", subject: "bob" });
  const server = await startApi({
    backend,
    tokens,
    log: silentLogger(),
    port: 0,
    host: "127.0.0.1",
    bodyLimitBytes: 1024 * 1024,
    outboundPolicy: clusterPolicy,
  });
  api = { url: server.url, stop: () => server.stop() };
}, 180_000);
afterAll(async () => {
  await api?.stop();
  await backend?.stop();
  await system?.stop();
  await integrations?.stop();
  await Promise.all([google?.stop(), llm?.stop(), redis?.stop()]);
});

async function call(path: string, token: string, body?: unknown): Promise<{ status: number; body: Loose }> {
  const res = await fetch(`${api.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

const sends = () => google.requests.filter((r) => r.operation === gmail.receives.operation);
const statusOf = async (id: string) => (await call(`/crews/${CREW}/status/${id}`, TOKENS.alice)).body;
const resume = (id: string, toolCallId: string, approve: boolean, token: string, feedback = "") =>
  call(`/crews/${CREW}/resume`, token, {
    execution_id: id,
    task_id: "act",
    tool_call_id: toolCallId,
    is_approve: approve,
    human_feedback: feedback,
  });

async function kickoffHeld() {
  llm.enqueue(toolCalls({ name: tool, input: gmail.input }), quoteToolResults());
  const started = await call(`/crews/${CREW}/kickoff`, TOKENS.alice, { inputs: {} });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const id = started.body.kickoff_id as string;
  const held = await waitFor(
    `execution ${id} holding gmail/send_email`,
    async () => {
      const s = await statusOf(id);
      if (s.status !== "running") throw new Error(`the execution ended: ${JSON.stringify(s)}`);
      return (s.pending_tool_calls as Loose[] | undefined)?.[0];
    },
    120_000,
    250,
  );
  // No pod waits: the task's one Job ends.
  await waitFor(
    `the parked Job of ${id} ended`,
    async () => {
      const jobs = await jobsOf(kubeconfig, system.namespace, id);
      return jobs.length === 1 && (jobs[0]!.status.active ?? 0) === 0 ? jobs : undefined;
    },
    60_000,
    250,
  );
  return { id, held };
}

const finished = (id: string) =>
  waitFor(
    `execution ${id} finished`,
    async () => {
      const s = await statusOf(id);
      return s.status === "running" ? undefined : s;
    },
    120_000,
    250,
  );

/** The execution's event stream to its end: each event's name and data. */
async function eventsOf(id: string) {
  const { body } = await call(`/crews/${CREW}/status/${id}/events`, TOKENS.alice);
  return (body as string)
    .split("\n\n")
    .filter((frame) => frame.includes("data: "))
    .map((frame) => ({
      event: /^event: (.*)$/m.exec(frame)![1]!,
      data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as Loose,
    }));
}

describe.skipIf(installed)("approving a connected app's action in task pods", () => {
  it("Gmail receives nothing until alice approves, then one mail with her token; bob gets 404, the org token 403", async () => {
    const before = sends().length;
    const { id, held } = await kickoffHeld();
    expect(held).toMatchObject({ task_id: "act", tool: "gmail/send_email", acts_as: "alice", arguments: gmail.input });
    const execution = JSON.parse(
      await kubectl(kubeconfig, ["get", "crewexecution", id, "-n", system.namespace, "-o", "json"]),
    );
    expect(execution.status.phase).toBe("WaitingForInput");
    // The wait's Event is worded as a tool call's approval, with the account it acts as — not as an answer's.
    const events = await kubectl(kubeconfig, [
      "get",
      "events",
      "-n",
      system.namespace,
      "--field-selector",
      `involvedObject.name=${id},reason=ToolCallApprovalRequested`,
      "-o",
      "jsonpath={.items[*].message}",
    ]);
    expect(events).toContain(`its call of gmail/send_email (tool_call_id ${held.tool_call_id}`);
    expect(events).toContain("acting as alice's connected account");
    expect(events).not.toContain("bob@example.com");
    expect(sends()).toHaveLength(before);

    // bob may not see alice's execution; the org token sees it but acts with no one's account: it is told whose it is.
    expect((await resume(id, held.tool_call_id, true, TOKENS.bob)).status).toBe(404);
    expect(await resume(id, held.tool_call_id, true, TOKENS.org)).toEqual({
      status: 403,
      body: {
        error: "Forbidden",
        message:
          "Only alice, whose connected account the call of gmail/send_email would act with, may approve or deny it",
      },
    });
    await sleep(1000);
    expect(sends()).toHaveLength(before);

    expect((await resume(id, held.tool_call_id, true, TOKENS.alice)).status).toBe(200);
    const done = await finished(id);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    const made = sends().slice(before);
    expect(made).toHaveLength(1);
    expect(made[0]!.token).toBe(accessToken);
    expect(gmail.receives.carrying(made[0]!)).toEqual(gmail.receives.is);
    expect(google.violations).toEqual([]);
    expect((await jobsOf(kubeconfig, system.namespace, id)).length).toBe(2);

    const stream = await eventsOf(id);
    const heldAt = stream.findIndex((e) => e.event === "tool_call_held");
    const decidedAt = stream.findIndex((e) => e.data.step?.kind === "decision");
    expect(heldAt).toBeGreaterThan(0);
    expect(decidedAt).toBeGreaterThan(heldAt);
    expect(stream[decidedAt]!.data.step).toMatchObject({
      tool: "gmail/send_email",
      tool_call_id: held.tool_call_id,
      acts_as: "alice",
      decision: "approved",
      decided_by: { kind: "user", subject: "alice" },
    });
    expect(stream.findIndex((e) => e.data.step?.kind === "tool")).toBeGreaterThan(decidedAt);
    const recorded = JSON.parse(
      await kubectl(kubeconfig, ["get", "crewexecution", id, "-n", system.namespace, "-o", "json"]),
    );
    expect(recorded.spec.decisions).toEqual([
      expect.objectContaining({ kind: "toolCall", toolCallId: held.tool_call_id, approve: true }),
    ]);
  }, 300_000);

  it("denied by alice: Gmail receives nothing and the model is told who denied it", async () => {
    const before = sends().length;
    const { id, held } = await kickoffHeld();
    expect((await resume(id, held.tool_call_id, false, TOKENS.alice, "Wait for the board")).status).toBe(200);
    const done = await finished(id);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(sends()).toHaveLength(before);
    expect(toolResultsSent(llm.requests.at(-1)!.body)).toEqual([
      { name: tool, text: "denied by alice: Wait for the board" },
    ]);
    const decision = (await eventsOf(id)).find((e) => e.data.step?.kind === "decision");
    expect(decision?.data.step).toMatchObject({ decision: "denied", output: "denied by alice: Wait for the board" });
  }, 300_000);
});
