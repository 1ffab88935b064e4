import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { crewYaml, finalStatus, jobsOf, kickoff, sleep, waitFor } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

const kubeconfig = inject("kubeconfig");
let system: OwnSystem;

beforeAll(async () => {
  system = await startOwnSystem(kubeconfig, "restart", {
    crews: [crewYaml("steady", "sleep-1200", { tasks: 3 })],
    killWith: "SIGKILL",
  });
});

afterAll(async () => {
  await system?.stop();
});

describe.skipIf(installed)("a controller killed at any point", () => {
  it("is SIGKILLed mid-run three times and restarted: every execution finishes, with exactly one Job per task", async () => {
    const { api, namespace } = system;
    const first = await system.startController({ identity: "replica-a" });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await kickoff(api, "steady"));

    // Kill at different moments: while the first Jobs start, mid-task, and right after a restart took over.
    let current = first;
    for (const [n, runFor] of [1500, 2600, 900].entries()) {
      await sleep(runFor);
      expect(await current.kill("SIGKILL")).toBeNull();
      await sleep(700); // tasks go on (and finish) while no controller runs
      current = await system.startController({ identity: `replica-${n % 2 === 0 ? "b" : "a"}` });
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
