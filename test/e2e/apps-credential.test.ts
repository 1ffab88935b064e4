import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifyAppCredential } from "../../core/app-credential.ts";
import { startAppsMcpFixture, type AppsMcpFixture } from "../support/apps-mcp-fixture.ts";
import { waitFor } from "../support/wait-for.ts";
import { kubectl, kubectlStatus } from "./support/kubectl.ts";
import { finalStatus, kickoff, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * The execution-scoped app credential on a real apiserver (issue 14 item 5): the controller mints it into the
 * execution's own Secret (owned by the CrewExecution), the task pod of an agent with apps mounts it read-only and
 * presents it to the apps' MCP endpoint (an SDK-built fixture that verifies it), the pod never holds the internal API
 * key, and when the execution finishes the credential is revoked and the Secret deleted. The value appears in no
 * status, event or log.
 */
const kubeconfig = inject("kubeconfig");
const SIGNING_KEY = "e2e-apps-signing-key-0123456789abcdef0123";
const INTERNAL_KEY = "e2e-internal-api-key-0123456789abcdef";
let system: OwnSystem;
let apps: AppsMcpFixture;

beforeAll(async () => {
  apps = await startAppsMcpFixture(SIGNING_KEY);
  system = await startOwnSystem(kubeconfig, "apps", {
    crews: [
      `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: mailer }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: call-tools+sleep-2500 }
  agents:
    - { name: sender, role: Sender, goal: "Mail about {topic}", apps: [gmail/send_email] }
    - { name: writer, role: Writer, goal: Write }
  tasks:
    - { name: send, agent: sender, description: "Send {topic}", expectedOutput: Sent }
    - { name: write, agent: writer, description: Write, expectedOutput: Text }
  runner: { retries: 0 }
`,
    ],
    controller: { env: apps.controllerEnv(INTERNAL_KEY) },
  });
});

afterAll(async () => {
  await system?.stop();
  await apps?.stop();
});

const getJson = async (...args: string[]) =>
  JSON.parse(await kubectl(kubeconfig, ["get", ...args, "-n", system.namespace, "-o", "json"])) as Loose;

describe.skipIf(installed)("the app credential of an execution in a cluster", () => {
  it("lives in the execution's Secret while it runs, reaches the apps through the pod's volume, then is revoked and gone", async () => {
    const { api, namespace } = system;
    const controller = system.controllers[0]!;
    const id = await kickoff(api, "mailer", { user: "alice" });
    const execution = await getJson("crewexecution", id);
    expect(execution.spec.requestedBy).toEqual({ kind: "org", subject: api.subject, user: "alice" });

    const secret = await waitFor(async () => {
      const found = await kubectlStatus(kubeconfig, ["get", "secret", `${id}-apps`, "-n", namespace, "-o", "json"]);
      return found.code === 0 ? (JSON.parse(found.stdout) as Loose) : undefined;
    }, 30_000);
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "CrewExecution", name: id, uid: execution.metadata.uid, controller: true }),
    ]);
    const credential = Buffer.from(secret.data.credential, "base64").toString("utf8");
    const claims = await verifyAppCredential(SIGNING_KEY, credential);
    expect(claims).toMatchObject({ executionUid: execution.metadata.uid, user: "alice", apps: ["gmail/send_email"] });

    const job = await getJson("job", `${id}-0`);
    const pod = job.spec.template.spec;
    const container = pod.containers[0];
    expect(pod.volumes).toContainEqual(
      expect.objectContaining({
        name: "apps-credential",
        secret: expect.objectContaining({ secretName: `${id}-apps` }),
      }),
    );
    expect(container.volumeMounts).toContainEqual({
      name: "apps-credential",
      mountPath: "/etc/kubecrew/apps",
      readOnly: true,
    });
    const envNames = (container.env as { name: string }[]).map((e) => e.name);
    expect(envNames).toContain("KUBECREW_APPS_URL");
    expect(envNames).not.toContain("KUBECREW_OAUTH_INTERNAL_API_KEY");
    expect(JSON.stringify(job)).not.toContain(INTERNAL_KEY);
    // The second task's agent has no apps: its pod mounts nothing of it.
    const second = await waitFor(async () => {
      const found = await kubectlStatus(kubeconfig, ["get", "job", `${id}-1`, "-n", namespace, "-o", "json"]);
      return found.code === 0 ? (JSON.parse(found.stdout) as Loose) : undefined;
    }, 60_000);
    expect(JSON.stringify(second.spec.template.spec)).not.toContain("apps-credential");

    const final = await finalStatus(api, "mailer", id);
    expect(final.status).toBe("completed");
    expect(final.result.tasks[0].output).toContain(`gmail__send_email done for alice (${namespace}/${id})`);
    expect(apps.bearers).toContain(credential);

    const revoked = await waitFor(async () => apps.revocations.find((r) => r.executionUid === execution.metadata.uid));
    expect(revoked.authorization).toBe(`Bearer ${INTERNAL_KEY}`);
    await waitFor(async () => {
      const found = await kubectlStatus(kubeconfig, ["get", "secret", `${id}-apps`, "-n", namespace]);
      return found.code !== 0 && found.stderr.includes("NotFound") ? true : undefined;
    }, 30_000);

    const seen = [
      JSON.stringify(await getJson("crewexecution", id)),
      JSON.stringify(await getJson("crewtaskresults")),
      JSON.stringify(await getJson("events")),
      await readFile(controller.logFile, "utf8"),
      await kubectl(kubeconfig, ["logs", `job/${id}-0`, "-n", namespace]).catch(() => ""),
      JSON.stringify(final),
    ];
    for (const text of seen) {
      expect(text).not.toContain(credential);
      expect(text).not.toContain(INTERNAL_KEY);
    }
  }, 120_000);
});
