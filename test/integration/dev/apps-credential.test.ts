import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startAppsMcpFixture, type AppsMcpFixture } from "../../support/apps-mcp-fixture.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

// kubecrew dev mints each execution's app credential in process (issue 14 item 5): task processes of agents with
// apps reach the apps' MCP endpoint with it as bearer and are offered exactly their agent's actions; the credential is
// revoked when the execution finishes. The endpoint is an SDK-built fixture that verifies the credential's signature.
const SIGNING_KEY = "apps-signing-key-for-tests-0123456789abcdef";
const INTERNAL_KEY = "internal-key-for-tests-0123456789abcdef";
/** The executions these tests ran: none may leave its credential file behind. */
const ran: string[] = [];
let apps: AppsMcpFixture;
let dev: RunningDev;
let noApps: RunningDev;

const appsCrew = `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: mailer }
spec:
  llm: { provider: mock, model: call-tools }
  agents:
    - { name: sender, role: Sender, goal: Send mail, apps: [gmail/send_email] }
    - { name: planner, role: Planner, goal: Plan, apps: [google_calendar] }
    - { name: thinker, role: Thinker, goal: Think }
  tasks:
    - { name: send, agent: sender, description: Send the mail, expectedOutput: Sent }
    - { name: plan, agent: planner, description: Plan the week, expectedOutput: Planned }
    - { name: think, agent: thinker, description: Think, expectedOutput: Thought }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

beforeAll(async () => {
  apps = await startAppsMcpFixture(SIGNING_KEY);
  dev = await startTestDev(
    { "mailer.yaml": appsCrew },
    {
      env: {
        KUBECREW_APPS_URL: apps.url,
        KUBECREW_APPS_SIGNING_KEY: SIGNING_KEY,
        KUBECREW_OAUTH_INTERNAL_API_KEY: INTERNAL_KEY,
      },
    },
  );
  noApps = await startTestDev({ "mailer.yaml": appsCrew });
}, 30_000);
afterAll(async () => {
  await dev?.stop();
  await noApps?.stop();
  await apps?.stop();
});

async function run(server: RunningDev, token: string, body: Record<string, unknown> = {}) {
  const res = await fetch(`${server.url}/crews/mailer/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: {}, ...body }),
  });
  const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
  ran.push(id);
  const status = await waitFor(async () => {
    const s = (await (
      await fetch(`${server.url}/crews/mailer/status/${id}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as Record<string, unknown>;
    return s.status === "running" ? undefined : s;
  }, 45_000);
  return { id, status };
}

describe("connected apps under kubecrew dev", () => {
  it("runs each agent with exactly its apps' actions, as the kickoff's user, then revokes the credential", async () => {
    const { id, status } = await run(dev, tokens.alice);
    expect(status.status).toBe("completed");
    const tasks = (status.result as { tasks: { task_id: string; output: string; tools_used: string[] }[] }).tasks;
    // The model calls a task's tools at once, so they finish (and are listed) in any order.
    expect(tasks.map((t) => [t.task_id, [...t.tools_used].sort()])).toEqual([
      ["send", ["gmail__send_email"]],
      ["plan", ["google_calendar__create_event", "google_calendar__list_events"]],
      ["think", []],
    ]);
    expect(tasks[0]!.output).toContain(`gmail__send_email done for alice (dev/${id})`);

    const mine = apps.calls.filter((c) => c.claims.executionUid === id);
    expect(mine.map((c) => c.tool).sort()).toEqual([
      "gmail__send_email",
      "google_calendar__create_event",
      "google_calendar__list_events",
    ]);
    // One credential for the whole execution: the crew's declared apps, the user, expiring at the deadline.
    expect(mine[0]!.claims).toMatchObject({ user: "alice", apps: ["gmail/send_email", "google_calendar"] });
    const expiresIn = mine[0]!.claims.expiresAt.getTime() - mine[0]!.claims.issuedAt.getTime();
    expect(expiresIn).toBeGreaterThan(3590_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);

    const revoked = await waitFor(async () => apps.revocations.find((r) => r.executionUid === id), 10_000);
    expect(revoked.authorization).toBe(`Bearer ${INTERNAL_KEY}`);
    // The credential's expiry is in whole seconds (a JWT's exp); the revocation names the deadline itself.
    expect(Math.floor(new Date(revoked.expiresAt).getTime() / 1000) * 1000).toBe(mine[0]!.claims.expiresAt.getTime());

    // The credential is nowhere in what the user sees.
    const bearer = apps.bearers.find(Boolean)!;
    expect(JSON.stringify(status)).not.toContain(bearer);
  }, 60_000);

  it("an org-token kickoff without a user acts as nobody; with a user, as that user", async () => {
    const nobody = await run(dev, tokens.org);
    expect(nobody.status.status).toBe("completed");
    expect(JSON.stringify(nobody.status)).toContain("gmail__send_email done for no user");
    const carol = await run(dev, tokens.org, { user: "carol" });
    expect(JSON.stringify(carol.status)).toContain("gmail__send_email done for carol");
  }, 90_000);

  it("removes the credential file when the execution finishes", async () => {
    const workDirs = readdirSync(tmpdir())
      .filter((d) => d.startsWith("kubecrew-dev-"))
      .map((d) => join(tmpdir(), d));
    const files = workDirs.flatMap((dir) => ran.map((id) => join(dir, id, "apps-credential")));
    const executionDirs = workDirs.flatMap((dir) => ran.map((id) => join(dir, id))).filter((d) => existsSync(d));
    expect(executionDirs.length).toBeGreaterThanOrEqual(3);
    await waitFor(async () => (files.some((f) => existsSync(f)) ? undefined : true), 10_000);
  });

  it("without KUBECREW_APPS_URL the integrations service runs in process: an unconfigured provider's tools say what to set", async () => {
    const { id, status } = await run(noApps, tokens.alice);
    expect(status).toMatchObject({ status: "completed" });
    const send = (status.result as { tasks: { task_id: string; output: string }[] }).tasks[0]!;
    expect(send.output).toContain(
      "gmail is not connected for user alice and cannot be connected: No client credentials are configured for google gmail; set KUBECREW_GOOGLE_CLIENT_ID and KUBECREW_GOOGLE_CLIENT_SECRET",
    );
    // The credential went to the process's own service, not to the fixture of the other server.
    expect(apps.calls.filter((c) => c.claims.executionUid === id)).toEqual([]);
  }, 60_000);
});
