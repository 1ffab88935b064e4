import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  applyCrew,
  createNamespace,
  crewYaml,
  deleteNamespace,
  finalStatus,
  jobsOf,
  kickoff,
  sleep,
  startClusterApi,
  startControllerProcess,
  type ClusterApi,
  type ControllerProcess,
  waitFor,
} from "./support/fixture.ts";
import { installed } from "./support/installed.ts";

const kubeconfig = inject("kubeconfig");
let namespace: string;
let api: ClusterApi;
const controllers: ControllerProcess[] = [];

beforeAll(async () => {
  namespace = await createNamespace(kubeconfig, "restart");
  await applyCrew(kubeconfig, namespace, crewYaml("steady", "sleep-1200", { tasks: 3 }));
  api = await startClusterApi(kubeconfig, namespace);
});

afterAll(async () => {
  await api?.stop();
  for (const c of controllers) await c.kill("SIGKILL");
  if (namespace) await deleteNamespace(kubeconfig, namespace);
});

describe.skipIf(installed)("a controller killed at any point", () => {
  it("is SIGKILLed mid-run three times and restarted: every execution finishes, with exactly one Job per task", async () => {
    const first = await startControllerProcess(kubeconfig, namespace, { identity: "replica-a" });
    controllers.push(first);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await kickoff(api, "steady"));

    // Kill at different moments: while the first Jobs start, mid-task, and right after a restart took over.
    let current = first;
    for (const [n, runFor] of [1500, 2600, 900].entries()) {
      await sleep(runFor);
      expect(await current.kill("SIGKILL")).toBeNull();
      await sleep(700); // tasks go on (and finish) while no controller runs
      current = await startControllerProcess(kubeconfig, namespace, { identity: `replica-${n % 2 === 0 ? "b" : "a"}` });
      controllers.push(current);
    }

    for (const id of ids) {
      const final = await finalStatus(api, "steady", id, 120_000);
      expect(final.status, `${id}: ${JSON.stringify(final)}`).toBe("completed");
      expect(final.result.tasks).toHaveLength(3);
    }
    const jobs = await jobsOf(kubeconfig, namespace);
    for (const id of ids) {
      const names = jobs
        .filter((j) => j.metadata.labels["kubecrew.io/execution"] === id)
        .map((j) => j.metadata.name)
        .sort();
      expect(names).toEqual([`${id}-0`, `${id}-1`, `${id}-2`]);
    }
    expect(jobs).toHaveLength(18);
    // Each Job ran one pod to success (no second attempt); the last pods may still be exiting when status completes.
    await waitFor(
      "every Job complete",
      async () => (await jobsOf(kubeconfig, namespace)).every((j) => j.status?.succeeded === 1),
      30_000,
    );
    for (const job of await jobsOf(kubeconfig, namespace)) expect(job.status.failed ?? 0).toBe(0);
  });
});
