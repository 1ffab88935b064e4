import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { expectAmpRun, HITL_CREW, runAmpClient, WEBHOOK_TOKEN } from "../support/amp-hitl.ts";
import { expectWebhooksMovedOnResume } from "../support/resume-webhooks.ts";
import {
  ORG_TOKEN,
  applyCrew,
  crewNamespace,
  finalStatus,
  jobsOf,
  kickoff,
  releaseCrewNamespace,
  startClusterApi,
  startControllerProcess,
  status,
  waitFor,
  type ClusterApi,
  type ControllerProcess,
  type Loose,
} from "./support/fixture.ts";
import { hostForPods, installed, installedSystem, mintOrgToken } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

// Issue 32 on a real control plane (the suite's controller on the local node, and the chart installed on kind): a
// humanInput task's answer waits with no pod held (its Job ended, the wait on the CrewExecution), an AMP client
// answers it through POST /resume, the credentials of its human-input webhook live in a Secret owned by the
// execution; the event stream sends human_input_requested while it waits, and the webhook URLs a resume gives
// replace the kickoff's (test/support/resume-webhooks.ts, as in kubecrew dev); one of six resumes sent at once is
// recorded; stop; timeout. With a controller of its own: the wait and each decision survive a controller SIGKILLed and
// an API restarted, and every task runs exactly as often as it should.

const kubeconfig = inject("kubeconfig");
const BLOG = "hitl-blog";
const HASTY = "hitl-hasty";
let namespace: string;
let controller: ControllerProcess | undefined;
let api: ClusterApi;

beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "hitl");
  await applyCrew(kubeconfig, namespace, HITL_CREW(BLOG));
  await applyCrew(kubeconfig, namespace, HITL_CREW(HASTY, ", humanInputTimeoutSeconds: 3"));
  if (!installedSystem) controller = await startControllerProcess(kubeconfig, namespace);
  api = await startClusterApi(kubeconfig, namespace);
});
afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  if (installedSystem) {
    for (const name of [BLOG, HASTY])
      await kubectl(kubeconfig, ["delete", "crew", name, "-n", namespace, "--ignore-not-found"]);
  }
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

const resume = (to: ClusterApi, id: string, approve: boolean, feedback = "") =>
  to.call(`/crews/${BLOG}/resume`, {
    body: { execution_id: id, task_id: "draft", human_feedback: feedback, is_approve: approve },
  });
/** The answer the execution waits with, once it is not `output` (the one answered before). */
const waiting = (to: ClusterApi, crew: string, id: string, output?: string) =>
  waitFor(
    `execution ${id} waiting`,
    async () => {
      const s: Loose = await status(to, crew, id);
      const pending = s.pending_human_input as { output: string } | undefined;
      return pending && pending.output !== output ? pending : undefined;
    },
    90_000,
    250,
  );
const executionObject = async (ns: string, id: string): Promise<Loose> =>
  JSON.parse(await kubectl(kubeconfig, ["get", "crewexecution", id, "-n", ns, "-o", "json"]));

describe("a humanInput task on a cluster", () => {
  it("an AMP client kicks off with webhooks, gets the wait, sends it back, approves the revision, reads completed", async () => {
    // The client's webhook server listens where the controller reaches it: loopback, or this machine's address.
    const token = installedSystem ? (await mintOrgToken(installedSystem)).token : ORG_TOKEN;
    const report = await runAmpClient(`${api.url}/crews/${BLOG}`, token, hostForPods());
    expectAmpRun(report);
    const id = report.kickoff_id;

    // The credentials are in a Secret owned by the execution, never in the CrewExecution.
    const object = await executionObject(namespace, id);
    expect(JSON.stringify(object)).not.toContain(WEBHOOK_TOKEN);
    expect(object.spec.humanInputWebhook.authentication).toEqual({
      strategy: "bearer",
      secretRef: { name: `${id}-human-input`, key: "authorization" },
    });
    const secret: Loose = JSON.parse(
      await kubectl(kubeconfig, ["get", "secret", `${id}-human-input`, "-n", namespace, "-o", "json"]),
    );
    expect(Buffer.from(secret.data.authorization, "base64").toString()).toBe(`Bearer ${WEBHOOK_TOKEN}`);
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "CrewExecution", name: id, uid: object.metadata.uid }),
    ]);
    // The decisions are on the execution: who, when, what.
    expect(object.spec.decisions).toEqual([
      expect.objectContaining({ kind: "taskOutput", task: "draft", revision: 0, approve: false }),
      expect.objectContaining({ kind: "taskOutput", task: "draft", revision: 1, approve: true }),
    ]);
    // One Job per run: the first answer, the revision, the next task.
    const jobs = (await jobsOf(kubeconfig, namespace, id)).map((j) => j.metadata.name).sort();
    expect(jobs).toEqual([`${id}-0`, `${id}-0-r1`, `${id}-1`]);
    // A decision is a record: the apiserver refuses to take one back (the CRD's rule).
    const takeBack = kubectl(kubeconfig, [
      "patch",
      "crewexecution",
      id,
      "-n",
      namespace,
      "--type",
      "merge",
      "-p",
      JSON.stringify({ spec: { decisions: [] } }),
    ]);
    await expect(takeBack).rejects.toThrow(/decisions are only appended/);
  });

  it("the event stream sends human_input_requested; webhook URLs a resume gives replace the kickoff's", async () => {
    const token = installedSystem ? (await mintOrgToken(installedSystem)).token : ORG_TOKEN;
    await expectWebhooksMovedOnResume(`${api.url}/crews/${BLOG}`, token, hostForPods(), 90_000);
  });

  it("holds no pod while it waits, kubectl shows WaitingForInput, and stop works while waiting", async () => {
    const id = await kickoff(api, BLOG);
    await waiting(api, BLOG, id);
    const table = await kubectl(kubeconfig, ["get", "crewexecutions", id, "-n", namespace]);
    expect(table.split("\n")[1]).toMatch(new RegExp(`^${id} +WaitingForInput +0/2 +draft `));
    await waitFor(
      "the task's Job complete, no pod left running",
      async () =>
        (await jobsOf(kubeconfig, namespace, id)).every((j) => j.status?.succeeded === 1 && !j.status?.active),
      60_000,
    );
    const events = await kubectl(kubeconfig, [
      "get",
      "events",
      "-n",
      namespace,
      "--field-selector",
      `involvedObject.name=${id}`,
    ]);
    expect(events).toContain("HumanInputRequested");
    expect((await api.call(`/crews/${BLOG}/stop/${id}`, { method: "POST" })).status).toBe(200);
    expect(await finalStatus(api, BLOG, id)).toMatchObject({ status: "error", error: "Execution stopped" });
    expect((await resume(api, id, true)).body).toMatchObject({
      message: "Execution is not in pending human input state",
    });
  });

  it("of six resumes sent at once, exactly one is recorded (the resourceVersion decides)", async () => {
    const id = await kickoff(api, BLOG);
    await waiting(api, BLOG, id);
    const answers = await Promise.all(Array.from({ length: 6 }, () => resume(api, id, true, "go")));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect((await executionObject(namespace, id)).spec.decisions).toHaveLength(1);
    expect(await finalStatus(api, BLOG, id)).toMatchObject({ status: "completed" });
  });

  it("a wait nobody answers fails after runner.humanInputTimeoutSeconds", async () => {
    const id = await kickoff(api, HASTY);
    const final = await finalStatus(api, HASTY, id);
    expect(final.status).toBe("error");
    expect(final.error).toContain("runner.humanInputTimeoutSeconds");
  });
});

describe.skipIf(installed)("a wait across restarts, with a controller of its own", () => {
  let system: OwnSystem;
  let restarted: ClusterApi | undefined;
  beforeAll(async () => {
    system = await startOwnSystem(kubeconfig, "hitl-restart", {
      crews: [HITL_CREW(BLOG)],
      controller: { identity: "first" },
      killWith: "SIGKILL",
    });
  });
  afterAll(async () => {
    await restarted?.stop();
    await system?.stop();
  });

  it("survives a controller SIGKILLed and an API restarted: every decision is acted on once", async () => {
    let current = system.api;
    const id = await kickoff(current, BLOG);
    const first = await waiting(current, BLOG, id);

    // The controller dies while the execution waits; the API restarts; the answer comes while no controller runs.
    await system.controllers.at(-1)!.kill("SIGKILL");
    await current.stop();
    restarted = current = await startClusterApi(kubeconfig, system.namespace);
    expect((await resume(current, id, false, "Add a title.")).status).toBe(200);
    await system.startController({ identity: "after-kill" });
    const second = await waiting(current, BLOG, id, first.output);
    expect(second.output).toContain("Add a title.");

    // Once more: killed while the revision waits, approved meanwhile, restarted.
    await system.controllers.at(-1)!.kill("SIGKILL");
    expect((await resume(current, id, true)).status).toBe(200);
    await system.startController({ identity: "after-second-kill" });
    expect(await finalStatus(current, BLOG, id)).toMatchObject({ status: "completed" });

    const jobs = await jobsOf(kubeconfig, system.namespace, id);
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual([`${id}-0`, `${id}-0-r1`, `${id}-1`]);
    await waitFor(
      "every Job complete",
      async () => (await jobsOf(kubeconfig, system.namespace, id)).every((j) => j.status?.succeeded === 1),
      30_000,
    );
    for (const job of await jobsOf(kubeconfig, system.namespace, id)) expect(job.status.failed ?? 0).toBe(0);
  });
});
