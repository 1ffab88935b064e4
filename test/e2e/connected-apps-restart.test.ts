import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAppsMcpFixture, type AppsMcpFixture } from "../support/apps-mcp-fixture.ts";
import { kubectl, kubectlStatus } from "./support/kubectl.ts";
import { finalStatus, jobsOf, kickoff, sleep, waitFor, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Issue 14: an execution's `-apps` Secret (its app credential) goes when the execution finishes, whichever controller
 * process sees the finish. The controller that minted the credentials is SIGKILLed while both executions run; their
 * tasks finish while no controller runs, and one execution's credential expires meanwhile (its deadline passed). The
 * next controller sees both finishes: it revokes the credential that is still valid, and deletes both Secrets while
 * the CrewExecutions are still there (not left to the owner reference until someone deletes the execution).
 */
const kubeconfig = inject("kubeconfig");
const SIGNING_KEY = "e2e-apps-restart-signing-key-0123456789abcdef";
const INTERNAL_KEY = "e2e-apps-restart-internal-key-0123456789";
let system: OwnSystem;
let apps: AppsMcpFixture;

const crew = (name: string, executionTimeoutSeconds: number) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  llm: { provider: mock, model: call-tools+sleep-4000 }
  agents:
    - { name: sender, role: Sender, goal: Mail Bob, apps: [gmail/send_email] }
  tasks:
    - { name: send, agent: sender, description: Mail Bob, expectedOutput: Sent }
  runner: { retries: 0, executionTimeoutSeconds: ${executionTimeoutSeconds} }
`;

beforeAll(async () => {
  apps = await startAppsMcpFixture(SIGNING_KEY);
  system = await startOwnSystem(kubeconfig, "apps-restart", {
    crews: [crew("brief", 12), crew("lasting", 3600)],
    killWith: "SIGKILL",
  });
});

afterAll(async () => {
  await system?.stop();
  await apps?.stop();
});

const controller = (identity: string) => system.startController({ identity, env: apps.controllerEnv(INTERNAL_KEY) });
const secretExists = async (id: string) =>
  (await kubectlStatus(kubeconfig, ["get", "secret", `${id}-apps`, "-n", system.namespace])).code === 0;
const getJson = async (...args: string[]) =>
  JSON.parse(await kubectl(kubeconfig, ["get", ...args, "-n", system.namespace, "-o", "json"])) as Loose;

describe.skipIf(installed)("an execution's apps Secret across a controller restart", () => {
  it("is deleted by the controller that sees the finish, also when the credential expired while none ran", async () => {
    const { api, namespace } = system;
    const first = await controller("apps-a");
    const brief = await kickoff(api, "brief", { user: "alice" });
    const lasting = await kickoff(api, "lasting", { user: "alice" });
    await waitFor(
      "both apps Secrets",
      async () => (await secretExists(brief)) && (await secretExists(lasting)),
      60_000,
    );
    expect(await first.kill("SIGKILL")).toBeNull();

    // Both tasks finish while no controller runs; then the brief execution's deadline (= its credential's expiry) passes.
    await waitFor(
      "both task Jobs succeeded",
      async () => (await jobsOf(kubeconfig, namespace)).filter((j) => j.status?.succeeded === 1).length === 2,
      90_000,
    );
    const briefStart = Date.parse((await getJson("crewexecution", brief)).status.startTime as string);
    await sleep(Math.max(0, briefStart + 12_000 + 1_000 - Date.now()));
    expect(await secretExists(brief)).toBe(true);
    expect(await secretExists(lasting)).toBe(true);
    expect(apps.revocations).toEqual([]);

    await controller("apps-b");
    for (const [crewName, id] of [
      ["brief", brief],
      ["lasting", lasting],
    ] as const) {
      const final = await finalStatus(api, crewName, id, 90_000);
      expect(final.status, JSON.stringify(final)).toBe("completed");
      expect(final.result.tasks[0].tools_used).toEqual(["gmail__send_email"]);
      await waitFor(`${id}-apps deleted`, async () => !(await secretExists(id)), 30_000);
      // Gone with the finish, not with the execution: the CrewExecution is still there.
      expect((await getJson("crewexecution", id)).metadata.name).toBe(id);
    }
    // The still-valid credential is revoked before its Secret goes; the expired one needs no revocation.
    const lastingUid = (await getJson("crewexecution", lasting)).metadata.uid as string;
    expect(apps.revocations.map((r) => r.executionUid)).toEqual([lastingUid]);
    expect(apps.revocations[0]!.authorization).toBe(`Bearer ${INTERNAL_KEY}`);
  }, 240_000);
});
