import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { kubectl } from "./support/kubectl.ts";
import { applyCrew, crewYaml, sleep, waitFor, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Objects the CRD's validation lets through but the schemas refuse are decoded once by the controller's caches and
 * reported once — a Warning Event and a condition — however often they are reconciled: a Crew whose task takes context
 * from a later task is Ready False (InvalidSpec); an execution whose crew webhook is a bare path fails, naming it.
 */
const kubeconfig = inject("kubeconfig");
let system: OwnSystem;

beforeAll(async () => {
  system = await startOwnSystem(kubeconfig, "invalid", {
    crews: [crewYaml("fine", "mock", { tasks: 1 })],
    controller: {},
  });
});

afterAll(async () => {
  await system?.stop();
});

const get = async (kind: string, name: string): Promise<Loose> =>
  JSON.parse(await kubectl(kubeconfig, ["get", kind, name, "-n", system.namespace, "-o", "json"]));

/** The Warning Events about one object. */
async function warningsAbout(kind: string, name: string): Promise<Loose[]> {
  const list = JSON.parse(await kubectl(kubeconfig, ["get", "events", "-n", system.namespace, "-o", "json"]));
  return list.items.filter(
    (e: Loose) => e.type === "Warning" && e.involvedObject.kind === kind && e.involvedObject.name === name,
  );
}

describe.skipIf(installed)("objects the schemas refuse", () => {
  it("a Crew: Ready False naming the problem, and one Warning Event, however often it is reconciled", async () => {
    const yaml = crewYaml("backwards", "mock", { tasks: 2 }).replace(
      'expectedOutput: "Text 1" }',
      'expectedOutput: "Text 1", context: [step2] }',
    );
    await applyCrew(kubeconfig, system.namespace, yaml);
    const ready = await waitFor("crew reported not Ready", async () =>
      (await get("crew", "backwards")).status?.conditions?.find(
        (c: Loose) => c.type === "Ready" && c.status === "False",
      ),
    );
    expect(ready.reason).toBe("InvalidSpec");
    expect(ready.message).toContain("step2");
    const events = await waitFor("its Warning Event", async () => {
      const found = await warningsAbout("Crew", "backwards");
      return found.length > 0 && found;
    });
    expect(events.map((e: Loose) => [e.reason, e.message])).toEqual([["InvalidSpec", ready.message]]);
    // Touched (a label: no new generation), it is reconciled again: nothing more is said.
    await kubectl(kubeconfig, ["label", "crew", "backwards", "-n", system.namespace, "touched=yes"]);
    await sleep(2000);
    expect(await warningsAbout("Crew", "backwards")).toHaveLength(1);
  });

  it("an execution: Failed with what is wrong (InvalidSpec), one Warning Event, no Job", async () => {
    const manifest = {
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "CrewExecution",
      metadata: { name: "odd-hook", namespace: system.namespace },
      // A bare path is a URI to the apiserver (format: uri) but no URL a webhook can go to.
      spec: { crewRef: { name: "fine" }, inputs: { topic: "t" }, webhooks: { crew: "/just-a-path" } },
    };
    await kubectl(kubeconfig, ["apply", "-n", system.namespace, "-f", "-"], JSON.stringify(manifest));
    const status = await waitFor("execution failed", async () => {
      const s = (await get("crewexecution", "odd-hook")).status;
      return s?.phase === "Failed" && s;
    });
    expect(status.error).toMatch(/^The CrewExecution is invalid: spec\.webhooks\.crew: /);
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: "Succeeded", status: "False", reason: "InvalidSpec", message: status.error }),
    ]);
    const events = await waitFor("its Warning Event", async () => {
      const found = await warningsAbout("CrewExecution", "odd-hook");
      return found.length > 0 && found;
    });
    expect(events.map((e: Loose) => e.reason)).toEqual(["InvalidSpec"]);
    await kubectl(kubeconfig, ["label", "crewexecution", "odd-hook", "-n", system.namespace, "touched=yes"]);
    await sleep(2000);
    expect(await warningsAbout("CrewExecution", "odd-hook")).toHaveLength(1);
    const jobs = JSON.parse(await kubectl(kubeconfig, ["get", "jobs", "-n", system.namespace, "-o", "json"]));
    expect(jobs.items.filter((j: Loose) => j.metadata.name.startsWith("odd-hook"))).toEqual([]);
  });
});
