import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  crewYaml,
  finalStatus,
  configMapsOf,
  jobsOf,
  resultsOf,
  kickoff,
  status,
  waitFor,
  ORG_TOKEN,
  type ControllerProcess,
} from "./support/fixture.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

const kubeconfig = inject("kubeconfig");
let system: OwnSystem;
/** The leader: the first controller, then the one that took over. */
let controller: ControllerProcess;
const TTL = 4;

let receiver: WebhookReceiver;

beforeAll(async () => {
  system = await startOwnSystem(kubeconfig, "ops", {
    crews: [
      crewYaml("hooked", "mock", { tasks: 3 }),
      crewYaml("quick", "mock", { tasks: 1 }),
      // Each LLM turn takes 3 s: the first turn's steps are on the cluster while the second one runs.
      crewYaml("pondering", "call-tools+sleep-3000", { tasks: 1 }).replace(
        'backstory: "Writes well." }',
        'backstory: "Writes well.", tools: [http_request] }',
      ),
      crewYaml("slow", "sleep-60000", { tasks: 1 }),
    ],
    killWith: "SIGKILL",
  });
  await kubectl(kubeconfig, [
    "create",
    "secret",
    "generic",
    "hooked-webhook",
    "-n",
    system.namespace,
    "--from-literal=secret=hook-s3cret",
  ]);
  receiver = await startWebhookReceiver();
  controller = await system.startController({
    identity: "ops-a",
    env: { KUBECREW_FINISHED_TTL_SECONDS: String(TTL) },
  });
});

afterAll(async () => {
  await system?.stop();
  receiver?.close();
});

describe.skipIf(installed)("steps while a task runs", () => {
  it("puts each step on the attempt's CrewTaskResult as it ends and streams it over /status/{id}/events", async () => {
    const id = await kickoff(system.api, "pondering");
    const events = await fetch(`${system.api.url}/crews/pondering/status/${id}/events`, {
      headers: { authorization: `Bearer ${ORG_TOKEN}` },
    });
    expect(events.status).toBe(200);
    const text = events.text();
    // The turn calling http_request and the call itself are on the in-progress result before the task ends.
    const progress = await waitFor(
      "steps on the running attempt's result",
      async () => {
        const results = await resultsOf(kubeconfig, system.namespace, id);
        const live = results.find((r) => r.metadata.name.endsWith("-steps"));
        return live?.spec.steps?.length >= 2 ? live : undefined;
      },
      30_000,
    );
    expect((await status(system.api, "pondering", id)).status).toBe("running");
    expect(progress.spec.output).toBeUndefined();
    expect(progress.spec.error).toBeUndefined();
    expect(progress.spec.steps.map((s: { kind: string; tool?: string }) => [s.kind, s.tool])).toEqual([
      ["llm", undefined],
      ["tool", "http_request"],
    ]);
    expect((await finalStatus(system.api, "pondering", id)).result.tasks[0].steps).toBe(3);
    const frames = (await text)
      .split("\n\n")
      .filter((b) => b.startsWith("id: "))
      .map((b) => b.split("\n")[1]!.slice("event: ".length));
    expect(frames).toEqual(["task_started", "step", "step", "step", "task_completed", "execution_completed"]);
  });
});

describe.skipIf(installed)("crews", () => {
  it("shows READY and TASKS for a valid crew, and rejects or reports one whose task names a missing agent or that repeats a task name", async () => {
    await waitFor("crew Ready", async () => {
      const table = await kubectl(kubeconfig, ["get", "crew", "hooked", "-n", system.namespace]);
      const [header, row] = table.trim().split("\n");
      return /^NAME\s+READY\s+TASKS\s+AGE/.test(header!) && /^hooked\s+True\s+3\s/.test(row!);
    });
    // Either the CRD's validation rejects the crew, or the controller reports it with Ready=False; both name the fault.
    const rejectedOrReported = async (name: string, yaml: string, rejection: RegExp, report: string) => {
      try {
        await applyCrew(kubeconfig, system.namespace, yaml);
      } catch (err) {
        expect(String((err as { stderr?: string }).stderr ?? err)).toMatch(rejection);
        return;
      }
      const ready = await waitFor(`crew ${name} reported not Ready`, async () => {
        const crew = JSON.parse(await kubectl(kubeconfig, ["get", "crew", name, "-n", system.namespace, "-o", "json"]));
        return crew.status?.conditions?.find(
          (c: { type: string; status: string }) => c.type === "Ready" && c.status === "False",
        );
      });
      expect(ready.reason).toBe("InvalidSpec");
      expect(ready.message).toContain(report);
    };
    await rejectedOrReported(
      "broken",
      crewYaml("broken", "mock", { tasks: 1 }).replace("agent: writer", "agent: ghost"),
      /Crew "broken" is invalid: spec\.tasks: .*agent/,
      'names agent "ghost", which is not defined',
    );
    await rejectedOrReported(
      "twice",
      crewYaml("twice", "mock", { tasks: 2 }).replace("name: step2", "name: step1"),
      /Crew "twice" is invalid: spec\.tasks: .*(unique|step1)/,
      'duplicate task name "step1"',
    );
  });
});

describe.skipIf(installed)("operations", () => {
  it("serves /healthz, /readyz and /metrics on the health port", async () => {
    expect((await fetch(`${controller.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${controller.url}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${controller.url}/metrics`)).text();
    expect(text).toMatch(/kubecrew_controller_reconciles_total\{result="success"\} [1-9]/);
    expect(text).toMatch(/kubecrew_controller_reconcile_duration_seconds_bucket/);
    expect(text).toMatch(/kubecrew_executions\{phase="Succeeded"\} [1-9]/);
    expect(text).toMatch(/kubecrew_controller_queue_depth \d/);
    expect(text).toMatch(/kubecrew_controller_reconciles_in_flight \d/);
    expect(text).toMatch(/kubecrew_controller_apiserver_writes_total\{verb="create",resource="jobs"\} [1-9]/);
  });

  it("writes an execution's status only when it changed", async () => {
    const statusPatches = async () => {
      const text = await (await fetch(`${controller.url}/metrics`)).text();
      const line = text
        .split("\n")
        .find((l) =>
          l.startsWith('kubecrew_controller_apiserver_writes_total{verb="patch",resource="crewexecutions/status"}'),
        );
      return Number(line?.split(" ").at(-1) ?? 0);
    };
    const id = await kickoff(system.api, "quick");
    await finalStatus(system.api, "quick", id);
    const before = await statusPatches();
    const reconciles = await controller.metric('kubecrew_controller_reconciles_total{result="success"}');
    for (let i = 0; i < 5; i++)
      await kubectl(kubeconfig, ["annotate", "ce", id, "-n", system.namespace, "--overwrite", `poke=${i}`]);
    await waitFor(
      "reconciled again",
      async () => (await controller.metric('kubecrew_controller_reconciles_total{result="success"}')) >= reconciles + 5,
    );
    expect(await statusPatches()).toBe(before);
  });

  it("answers /status from its caches: polling costs the apiserver no request", async () => {
    const id = await kickoff(system.api, "quick");
    await finalStatus(system.api, "quick", id);
    const before = system.api.backend.readThroughs();
    for (let i = 0; i < 50; i++) await status(system.api, "quick", id);
    expect(system.api.backend.readThroughs()).toBe(before);
  });

  it("removes Jobs and ConfigMaps of a finished execution after the TTL, keeping its results", async () => {
    const id = await kickoff(system.api, "quick");
    await finalStatus(system.api, "quick", id);
    expect(await jobsOf(kubeconfig, system.namespace, id)).toHaveLength(1);
    await waitFor(
      "children removed",
      async () => {
        const jobs = await jobsOf(kubeconfig, system.namespace, id);
        const cms = await configMapsOf(kubeconfig, system.namespace, id);
        return jobs.length === 0 && cms.length === 0;
      },
      (TTL + 20) * 1000,
    );
    const results = await resultsOf(kubeconfig, system.namespace, id);
    expect(results).toHaveLength(2); // the success and the attempt's steps (`<pod>-steps`)
    expect((await status(system.api, "quick", id)).status).toBe("completed");

    // Once removed, later reconciles of the execution remove nothing again (no marker is written on it either).
    const configMapDeletes = 'kubecrew_controller_apiserver_writes_total{verb="delete",resource="configmaps"}';
    const deletes = await controller.metric(configMapDeletes);
    expect(deletes).toBeGreaterThan(0);
    const reconciles = await controller.metric('kubecrew_controller_reconciles_total{result="success"}');
    for (let i = 0; i < 3; i++)
      await kubectl(kubeconfig, ["annotate", "ce", id, "-n", system.namespace, "--overwrite", `poke=${i}`]);
    await waitFor(
      "reconciled again",
      async () => (await controller.metric('kubecrew_controller_reconciles_total{result="success"}')) >= reconciles + 3,
    );
    expect(await controller.metric(configMapDeletes)).toBe(deletes);
  });

  it("deleting a CrewExecution removes its Job, pod, ConfigMap and results through the garbage collector", async () => {
    const id = await kickoff(system.api, "slow");
    await waitFor("Job running", async () =>
      (await jobsOf(kubeconfig, system.namespace, id)).find((j) => (j.status?.active ?? 0) > 0),
    );
    await kubectl(kubeconfig, ["delete", "ce", id, "-n", system.namespace, "--wait=false"]);
    await waitFor(
      "children collected",
      async () => {
        const selector = `kubecrew.io/execution=${id}`;
        const left = await kubectl(kubeconfig, [
          "get",
          "jobs,pods,configmaps,crewtaskresults",
          "-n",
          system.namespace,
          "-l",
          selector,
          "-o",
          "name",
        ]);
        return left.trim() === "";
      },
      60_000,
    );
  });

  it("elects one leader: a second replica waits, and takes over when the leader shuts down", async () => {
    const standby = await system.startController({ identity: "ops-b", waitForLeader: false });
    expect((await fetch(`${standby.url}/readyz`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await standby.metric("kubecrew_controller_leader")).toBe(0);
    // The standby only campaigns: it has written nothing but its attempts at the Lease.
    const writes = (await (await fetch(`${standby.url}/metrics`)).text())
      .split("\n")
      .filter((l) => l.startsWith("kubecrew_controller_apiserver_writes_total{"));
    expect(writes.filter((l) => !l.includes('resource="leases"'))).toEqual([]);
    expect(await controller.metric("kubecrew_controller_leader")).toBe(1);
    const started = Date.now();
    expect(await controller.kill("SIGTERM")).toBe(0);
    await waitFor("standby leads", async () => (await standby.metric("kubecrew_controller_leader")) === 1, 15_000);
    expect(Date.now() - started).toBeLessThan(4000); // released, not expired
    const id = await kickoff(system.api, "quick");
    expect((await finalStatus(system.api, "quick", id)).status).toBe("completed");
    controller = standby; // the leader from here on
  });
});

describe.skipIf(installed)("webhooks across a controller crash", () => {
  it("delivers a webhook its receiver refused until the controller was SIGKILLed, from the next controller", async () => {
    receiver.failNext = 1000;
    const id = await kickoff(system.api, "quick", { crewWebhookUrl: `${receiver.url}/crew` });
    expect((await finalStatus(system.api, "quick", id)).status).toBe("completed");
    await new Promise((r) => setTimeout(r, 1000)); // a few refused attempts
    expect(await controller.kill("SIGKILL")).toBeNull();
    receiver.failNext = 0;
    controller = await system.startController({
      identity: "ops-b",
      env: { KUBECREW_FINISHED_TTL_SECONDS: String(TTL) },
    });
    const hook = await waitFor(
      "crew webhook after restart",
      async () => receiver.hooks.find((h) => h.path === "/crew" && JSON.parse(h.body).kickoff_id === id),
      30_000,
    );
    expect(JSON.parse(hook.body)).toMatchObject({ kickoff_id: id, status: "completed" });
  });
});
