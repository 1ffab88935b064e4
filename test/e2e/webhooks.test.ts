import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  crewNamespace,
  crewYaml,
  finalStatus,
  kickoff,
  releaseCrewNamespace,
  startClusterApi,
  startControllerProcess,
  waitFor,
  type ClusterApi,
  type ControllerProcess,
} from "./support/fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";
import { hostForPods, installedSystem } from "./support/installed.ts";

// Task, crew and step webhooks as a user receives them: against the suite's own controller process, and against the
// chart installed on kind, where the controller pod reaches this process's receiver at the host's address on the
// kind network (E2E_HOST_ADDRESS, which hack/kind-e2e.sh sets).

const kubeconfig = inject("kubeconfig");
let namespace: string;
let api: ClusterApi;
let controller: ControllerProcess | undefined;

let receiver: WebhookReceiver;

async function webhookSecret(crew: string, secret: string): Promise<void> {
  const manifest = await kubectl(kubeconfig, [
    "create",
    "secret",
    "generic",
    `${crew}-webhook`,
    "-n",
    namespace,
    `--from-literal=secret=${secret}`,
    "--dry-run=client",
    "-o",
    "yaml",
  ]);
  await kubectl(kubeconfig, ["apply", "-n", namespace, "-f", "-"], manifest);
}

beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "hooks");
  await applyCrew(kubeconfig, namespace, crewYaml("hooked", "mock", { tasks: 3 }));
  // call-tools calls http_request (with a made-up URL, an error the model is told about): three steps per task.
  await applyCrew(
    kubeconfig,
    namespace,
    crewYaml("acting", "call-tools", { tasks: 2 }).replace(
      'backstory: "Writes well." }',
      'backstory: "Writes well.", tools: [http_request] }',
    ),
  );
  await webhookSecret("hooked", "hook-s3cret");
  await webhookSecret("acting", "step-s3cret");
  receiver = await startWebhookReceiver(hostForPods());
  if (!installedSystem) controller = await startControllerProcess(kubeconfig, namespace, { identity: "hooks" });
  api = await startClusterApi(kubeconfig, namespace);
});

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  receiver?.close();
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

describe("webhooks", () => {
  it("POSTs each task and the crew's end, signed with the crew's secret, retrying a failing receiver", async () => {
    receiver.failNext = 2;
    const id = await kickoff(api, "hooked", {
      taskWebhookUrl: `${receiver.url}/task`,
      crewWebhookUrl: `${receiver.url}/crew`,
      meta: { ticket: 42 },
    });
    expect((await finalStatus(api, "hooked", id)).status).toBe("completed");
    await waitFor("4 webhooks", async () => receiver.hooks.filter((h) => h.body.includes(id)).length >= 4, 30_000);
    const mine = receiver.hooks.filter((h) => JSON.parse(h.body).kickoff_id === id);
    for (const h of mine) {
      const ts = h.headers["x-kubecrew-timestamp"] as string;
      const expected = "sha256=" + createHmac("sha256", "hook-s3cret").update(`${ts}.${h.body}`).digest("hex");
      expect(h.headers["x-kubecrew-signature"]).toBe(expected);
    }
    const tasks = mine.filter((h) => h.path === "/task").map((h) => JSON.parse(h.body));
    expect(tasks.map((t) => t.name).sort()).toEqual(["step1", "step2", "step3"]);
    expect(tasks[0]).toMatchObject({ kickoff_id: id, agent: "tides Writer", meta: { ticket: 42 } });
    expect(tasks[0].description).toMatch(/^Step \d on tides$/);
    expect(tasks[0].expected_output).toMatch(/^Text \d$/);
    expect(tasks[0].output).toContain("[mock llm]");
    const crew = mine.filter((h) => h.path === "/crew").map((h) => JSON.parse(h.body));
    expect(crew).toHaveLength(1);
    expect(crew[0]).toMatchObject({ kickoff_id: id, meta: { ticket: 42 } });
    expect(crew[0].result).toContain("[mock llm]");
    expect(crew[0].token_usage.total_tokens).toBeGreaterThan(0);
    const ce = JSON.parse(await kubectl(kubeconfig, ["get", "ce", id, "-n", namespace, "-o", "json"]));
    await waitFor("deliveries recorded", async () => {
      const annotations =
        JSON.parse(await kubectl(kubeconfig, ["get", "ce", id, "-n", namespace, "-o", "json"])).metadata.annotations ??
        {};
      const records = JSON.parse(annotations["kubecrew.io/webhook-deliveries"] ?? "{}");
      return Object.keys(records).length === 4 && Object.values(records).every((r) => r === "delivered");
    });
    expect(ce.metadata.name).toBe(id);
  });
});

describe("step webhooks", () => {
  it("POSTs each step once, signed, in order per task, and records every delivery", async () => {
    const id = await kickoff(api, "acting", { stepWebhookUrl: `${receiver.url}/step` });
    const final = await finalStatus(api, "acting", id);
    expect(final.status).toBe("completed");
    expect(final.result.tasks.map((t: { steps: number; tools_used: string[] }) => [t.steps, t.tools_used])).toEqual([
      [3, ["http_request"]],
      [3, ["http_request"]],
    ]);
    const mine = () => receiver.hooks.filter((h) => h.path === "/step" && JSON.parse(h.body).kickoff_id === id);
    await waitFor("6 step webhooks", async () => mine().length >= 6, 60_000);
    for (const h of mine()) {
      const ts = h.headers["x-kubecrew-timestamp"] as string;
      const expected = "sha256=" + createHmac("sha256", "step-s3cret").update(`${ts}.${h.body}`).digest("hex");
      expect(h.headers["x-kubecrew-signature"]).toBe(expected);
      expect(h.headers["x-kubecrew-event"]).toBe("step");
    }
    const posts = mine().map((h) => JSON.parse(h.body));
    for (const task of ["step1", "step2"]) {
      const ofTask = posts.filter((p) => p.task_id === task);
      expect(ofTask.map((p) => [p.attempt, p.step.index, p.step.kind, p.step.tool])).toEqual([
        [1, 0, "llm", undefined],
        [1, 1, "tool", "http_request"],
        [1, 2, "llm", undefined],
      ]);
    }
    await waitFor("step deliveries recorded", async () => {
      const ce = JSON.parse(await kubectl(kubeconfig, ["get", "ce", id, "-n", namespace, "-o", "json"]));
      const records = JSON.parse(ce.metadata.annotations?.["kubecrew.io/webhook-deliveries"] ?? "{}");
      return (
        Object.keys(records).sort().join() ===
        [
          "step:step1:1:0",
          "step:step1:1:1",
          "step:step1:1:2",
          "step:step2:1:0",
          "step:step2:1:1",
          "step:step2:1:2",
        ].join()
      );
    });
    expect(mine()).toHaveLength(6);
  });
});
