import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifyAppCredential } from "../../core/app-credential.ts";
import { startAppsMcpFixture, type AppsMcpFixture } from "../support/apps-mcp-fixture.ts";
import { kubectl, kubectlStatus } from "./support/kubectl.ts";
import { applyCrew, finalStatus, kickoff, waitFor, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Issue 14: an execution acts with the apps its crew declared when it started. Apps switched on for an agent while an
 * execution runs do not reach that execution (no credential appears mid-run, its later task's pod mounts nothing and
 * calls no app), and apps switched off mid-run stay with the execution that started with them (its credential and its
 * later task keep them); the next execution gets the crew as it is then. Both follow from the crew snapshot the
 * execution takes at its start.
 */
const kubeconfig = inject("kubeconfig");
const SIGNING_KEY = "e2e-apps-midrun-signing-key-0123456789abcdef";
const INTERNAL_KEY = "e2e-apps-midrun-internal-key-0123456789";
let system: OwnSystem;
let apps: AppsMcpFixture;

/** Two tasks; the first (no apps) runs a few seconds, so the crew can be changed while it runs. */
const crew = (noterApps: string[]) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: notes }
spec:
  llm: { provider: mock, model: call-tools+sleep-3000 }
  agents:
    - { name: reader, role: Reader, goal: Read }
    - { name: noter, role: Noter, goal: Take notes, apps: [${noterApps.join(", ")}] }
  tasks:
    - { name: read, agent: reader, description: Read, expectedOutput: Facts }
    - { name: note, agent: noter, description: Note the facts, expectedOutput: A page }
  runner: { retries: 0 }
`;

beforeAll(async () => {
  apps = await startAppsMcpFixture(SIGNING_KEY);
  system = await startOwnSystem(kubeconfig, "apps-midrun", { controller: { env: apps.controllerEnv(INTERNAL_KEY) } });
});

afterAll(async () => {
  await system?.stop();
  await apps?.stop();
});

const getJson = async (...args: string[]) =>
  JSON.parse(await kubectl(kubeconfig, ["get", ...args, "-n", system.namespace, "-o", "json"])) as Loose;
const tryJson = async (...args: string[]) => {
  const found = await kubectlStatus(kubeconfig, ["get", ...args, "-n", system.namespace, "-o", "json"]);
  return found.code === 0 ? (JSON.parse(found.stdout) as Loose) : undefined;
};
/**
 * Kicks off as alice; once the first task's Job runs, calls `whileRunning` and changes the crew's noter to `appsMidRun`
 * (before the second task starts: its Job does not exist yet). Answers the final status and the second task's pod.
 */
async function runChangingTheCrew(appsMidRun: string[], whileRunning: (id: string) => Promise<void> = async () => {}) {
  const id = await kickoff(system.api, "notes", { user: "alice" });
  await waitFor(`${id}-0 Job`, () => tryJson("job", `${id}-0`), 30_000);
  await whileRunning(id);
  await applyCrew(kubeconfig, system.namespace, crew(appsMidRun));
  expect(await tryJson("job", `${id}-1`), "the second task started before the crew changed").toBeUndefined();
  const final = await finalStatus(system.api, "notes", id, 90_000);
  expect(final.status, JSON.stringify(final)).toBe("completed");
  return { id, final, secondPod: (await getJson("job", `${id}-1`)).spec.template.spec as Loose };
}
const callsOf = (id: string) => apps.calls.filter((c) => c.claims.execution === `${system.namespace}/${id}`);

describe.skipIf(installed)("apps changed on a Crew while an execution runs", () => {
  it("switched on mid-run: the running execution has no apps (no credential, no mount, no call); the next one has them", async () => {
    await applyCrew(kubeconfig, system.namespace, crew([]));
    const { id, final, secondPod } = await runChangingTheCrew(["notion/create_page"]);
    expect(final.result.tasks[1].tools_used).toEqual([]);
    expect(JSON.stringify(secondPod)).not.toContain("apps-credential");
    expect(await tryJson("secret", `${id}-apps`)).toBeUndefined();
    expect(callsOf(id)).toEqual([]);

    const next = await kickoff(system.api, "notes", { user: "alice" });
    const nextFinal = await finalStatus(system.api, "notes", next, 90_000);
    expect(nextFinal.status).toBe("completed");
    expect(nextFinal.result.tasks[1].tools_used).toEqual(["notion__create_page"]);
    expect(callsOf(next).map((c) => [c.tool, c.claims.user, c.claims.apps])).toEqual([
      ["notion__create_page", "alice", ["notion/create_page"]],
    ]);
  }, 200_000);

  it("switched off mid-run: the running execution keeps the apps it started with; the next one has none", async () => {
    await applyCrew(kubeconfig, system.namespace, crew(["notion/create_page"]));
    let credential = "";
    const { id, final, secondPod } = await runChangingTheCrew([], async (running) => {
      // Read while the execution runs: its Secret goes when it finishes.
      const secret = await waitFor(`${running}-apps`, () => tryJson("secret", `${running}-apps`), 30_000);
      credential = Buffer.from(secret.data.credential as string, "base64").toString("utf8");
    });
    expect((await verifyAppCredential(SIGNING_KEY, credential)).apps).toEqual(["notion/create_page"]);
    expect(final.result.tasks[1].tools_used).toEqual(["notion__create_page"]);
    expect(JSON.stringify(secondPod)).toContain(`${id}-apps`);
    expect(callsOf(id).map((c) => c.tool)).toEqual(["notion__create_page"]);

    const next = await kickoff(system.api, "notes", { user: "alice" });
    const nextFinal = await finalStatus(system.api, "notes", next, 90_000);
    expect(nextFinal.status).toBe("completed");
    expect(nextFinal.result.tasks[1].tools_used).toEqual([]);
    expect(await tryJson("secret", `${next}-apps`)).toBeUndefined();
    expect(callsOf(next)).toEqual([]);
  }, 200_000);
});
