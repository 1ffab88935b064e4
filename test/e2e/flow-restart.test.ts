import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { jobsOf, sleep, waitFor, type Loose } from "./support/fixture.ts";
import { flowManifest } from "./support/flow-manifests.ts";
import { installed } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Exactly once across controller kills: a flow of agent methods (each a child execution whose task is a Job pod), an
 * `each` fanning out over three items and a CEL method, kicked off twice while the controller is SIGKILLed three
 * times. Every run completes, and each method run, each item of the fan-out and each task ran once: one result per
 * method, one child execution per agent run, one Job per child.
 */
const kubeconfig = inject("kubeconfig");
let system: OwnSystem;

const document = {
  schema: "crewai.flow/v1",
  name: "SteadyFlow",
  state: { type: "json_schema", json_schema: { type: "object", properties: { topic: { type: "string" } } } },
  methods: {
    gather: {
      start: true,
      do: {
        call: "agent",
        with: { role: "Gatherer", goal: "Gather", backstory: "Quick.", input: "Facts on ${state.topic}" },
      },
    },
    expand: {
      listen: "gather",
      do: {
        call: "each",
        in: "['one', 'two', 'three']",
        do: [
          {
            name: "write",
            action: {
              call: "agent",
              with: { role: "Writer", goal: "Write", backstory: "Plain.", input: "Part ${item}" },
            },
          },
        ],
      },
    },
    count: { listen: "expand", do: { call: "expression", expr: "size(outputs.expand)" } },
    close: {
      listen: "count",
      do: {
        call: "agent",
        with: { role: "Closer", goal: "Close", backstory: "Brief.", input: "${outputs.count} parts" },
      },
    },
  },
};

/** Six items, four at a time: a kill finds items running, items done and items not started yet. */
const ITEMS = ["a", "b", "c", "d", "e", "f"];
const fanOut = {
  schema: "crewai.flow/v1",
  name: "FanOutFlow",
  methods: {
    expand: {
      start: true,
      do: {
        call: "each",
        in: JSON.stringify(ITEMS).replaceAll('"', "'"),
        do: [
          {
            name: "write",
            action: {
              call: "agent",
              with: { role: "Writer", goal: "Write", backstory: "Plain.", input: "Part ${item}" },
            },
          },
        ],
      },
    },
    count: { listen: "expand", do: { call: "expression", expr: "size(outputs.expand)" } },
  },
};

beforeAll(async () => {
  system = await startOwnSystem(kubeconfig, "flowrestart", { killWith: "SIGKILL" });
  await kubectl(
    kubeconfig,
    ["apply", "-n", system.namespace, "-f", "-"],
    flowManifest("steady", document, { provider: "mock", model: "sleep-1200" }),
  );
  await kubectl(
    kubeconfig,
    ["apply", "-n", system.namespace, "-f", "-"],
    flowManifest("fan-out", fanOut, { provider: "mock", model: "sleep-2500" }),
  );
});

afterAll(async () => {
  await system?.stop();
});

async function status(id: string, flow = "steady"): Promise<Loose> {
  const res = await system.api.call(`/flows/${flow}/status/${id}`);
  if (res.status !== 200) throw new Error(`status ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe.skipIf(installed)("a flow's controller killed at any point", () => {
  it("is SIGKILLed mid-run three times: every run completes, each method, item and task run exactly once", async () => {
    const { api, namespace } = system;
    let current = await system.startController({ identity: "replica-a" });
    await waitFor("flow served", async () => (await api.call("/flows/steady/inputs")).status === 200, 30_000);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await api.call("/flows/steady/kickoff", { body: { inputs: { topic: "tides" } } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(res.body.kickoff_id);
    }
    const killedMidRun: string[] = [];
    for (const [n, runFor] of [2500, 4000, 1500].entries()) {
      await sleep(runFor);
      const running = (await Promise.all(ids.map((id) => status(id)))).filter((s) => s.status === "running");
      killedMidRun.push(...running.map((s) => `${n}:${s.current_task}`));
      expect(await current.kill("SIGKILL")).toBeNull();
      await sleep(700); // tasks go on (and finish) while no controller runs
      current = await system.startController({ identity: `replica-${n % 2 === 0 ? "b" : "a"}` });
    }

    // Each kill found runs under way (the methods they were in: a kill between methods and inside the fan-out).
    expect(new Set(killedMidRun.map((k) => k.split(":")[0])).size, killedMidRun.join(", ")).toBe(3);

    for (const id of ids) {
      const final = await waitFor(
        `${id} finished`,
        async () => {
          const body = await status(id);
          return body.status === "running" ? undefined : body;
        },
        180_000,
        500,
      );
      expect(final.status, JSON.stringify(final)).toBe("completed");
      expect(final.result.tasks.map((t: Loose) => t.task_id)).toEqual(["gather", "expand", "count", "close"]);
      expect(final.result.outputs.count).toBe(3);
      expect(final.result.outputs.expand).toHaveLength(3);
    }

    const results = JSON.parse(await kubectl(kubeconfig, ["get", "crewtaskresults", "-n", namespace, "-o", "json"]))
      .items as Loose[];
    const executions = JSON.parse(await kubectl(kubeconfig, ["get", "crewexecutions", "-n", namespace, "-o", "json"]))
      .items as Loose[];
    const jobs = await jobsOf(kubeconfig, namespace);
    for (const id of ids) {
      const methods = results
        .filter((r) => r.metadata.labels["kubecrew.io/execution"] === id)
        .map((r) => r.metadata.labels["kubecrew.io/task"])
        .sort();
      expect(methods).toEqual(["close", "count", "expand", "gather"]);
      const children = executions.filter((e) => e.metadata.labels?.["kubecrew.io/flow-execution"] === id);
      // gather, the three items of expand, close: five agent runs, each one execution with one Job.
      expect(children).toHaveLength(5);
      for (const child of children) {
        expect(child.status.phase).toBe("Succeeded");
        expect(jobs.filter((j) => j.metadata.labels["kubecrew.io/execution"] === child.metadata.name)).toHaveLength(1);
      }
      const fe = JSON.parse(await kubectl(kubeconfig, ["get", "fe", id, "-n", namespace, "-o", "json"]));
      expect(fe.status.methods.map((m: Loose) => m.id)).toEqual(["gather#1", "expand#1", "count#1", "close#1"]);
    }
  });

  it("is SIGKILLed twice inside an each: no item is lost or run twice, the outputs keep the items' order", async () => {
    const { api, namespace } = system;
    for (const controller of system.controllers) await controller.kill("SIGKILL"); // the test before's last one
    let current = await system.startController({ identity: "fan-a" });
    await waitFor("fan-out served", async () => (await api.call("/flows/fan-out/inputs")).status === 200, 30_000);
    const res = await api.call("/flows/fan-out/kickoff", { body: { inputs: {} } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.kickoff_id as string;
    const items = async () =>
      JSON.parse(
        await kubectl(kubeconfig, [
          ...["get", "crewexecutions", "-n", namespace, "-l", `kubecrew.io/flow-execution=${id}`, "-o", "json"],
        ]),
      ).items as Loose[];
    const done = (children: Loose[]) => children.filter((c) => c.status?.phase === "Succeeded").length;

    // 1. Items running, none done, the last two not started (four at a time).
    const first = await waitFor("the fan-out under way", async () => {
      const children = await items();
      return children.length > 0 && done(children) === 0 ? children : undefined;
    });
    expect(await current.kill("SIGKILL")).toBeNull();
    expect(first.length).toBeLessThanOrEqual(4);
    await sleep(700);
    current = await system.startController({ identity: "fan-b" });

    // 2. Some items done, some not: killed again.
    const second = await waitFor(
      "some items done, some not",
      async () => {
        const children = await items();
        return done(children) > 0 && done(children) < ITEMS.length ? children : undefined;
      },
      120_000,
      100,
    );
    expect(await current.kill("SIGKILL")).toBeNull();
    expect((await status(id, "fan-out")).current_task).toBe("expand");
    await sleep(700);
    await system.startController({ identity: "fan-a" });

    const final = await waitFor(
      "fan-out finished",
      async () => {
        const body = await status(id, "fan-out");
        return body.status === "running" ? undefined : body;
      },
      180_000,
      500,
    );
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.outputs.count).toBe(ITEMS.length);
    // Each item's agent answered its own item, in the items' order.
    expect(final.result.outputs.expand.map((o: Loose) => /Part (\w)/.exec(o.raw)?.[1])).toEqual(ITEMS);
    const children = await items();
    expect(children).toHaveLength(ITEMS.length);
    expect(new Set(children.map((c) => c.metadata.name)).size).toBe(ITEMS.length);
    const jobs = await jobsOf(kubeconfig, namespace);
    for (const child of children) {
      expect(child.status.phase).toBe("Succeeded");
      expect(jobs.filter((j) => j.metadata.labels["kubecrew.io/execution"] === child.metadata.name)).toHaveLength(1);
    }
    const results = JSON.parse(
      await kubectl(kubeconfig, [
        ...["get", "crewtaskresults", "-n", namespace, "-l", `kubecrew.io/execution=${id}`, "-o", "json"],
      ]),
    ).items as Loose[];
    expect(results.map((r) => r.metadata.labels["kubecrew.io/task"]).sort()).toEqual(["count", "expand"]);
    expect(second.length).toBeGreaterThan(0);
  });
});
