import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { TaskAssignment } from "../../core/task-assignment.ts";
import { buildTaskPrompt } from "../../runner/prompt.ts";
import { forceDeletePod, readyPod, replacementPod } from "./support/chart-pods.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { kubectl } from "./support/kubectl.ts";
import { finalStatus, jobsOf, kickoff, resultsOf, sleep, waitFor, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

// CrewAI's asynchronous tasks and task context on a real control plane: two asynchronous tasks as two Jobs at once,
// the task joining them created after both results, with exactly their outputs; a controller SIGKILLed while they
// run (a process of the test's own on the local node; on kind the chart's controller pod, force-deleted); bad
// definitions refused at apply or reported on the Crew. All but the own controller's run on kind too, against the
// installed chart.
const kubeconfig = inject("kubeconfig");

/** Two asynchronous tasks and a third taking both as context; every answer of `model` (a mock model). */
const parallelCrew = (name: string, model: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: "${model}" }
  agents:
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
    - { name: facts, agent: writer, description: "Collect facts on {topic}", expectedOutput: F, asyncExecution: true }
    - { name: quotes, agent: writer, description: "Collect quotes on {topic}", expectedOutput: Q, asyncExecution: true }
    - { name: draft, agent: writer, description: "Draft on {topic}", expectedOutput: D, context: [facts, quotes] }
  runner: { retries: 0, taskTimeoutSeconds: 120 }
`;

// The suite's controller on the local node, the chart's on kind. On kind the killed crew's tasks sleep longer: its
// task pods are real containers, slower to start, and the kill must come while both run.
const suite = crewSuite(kubeconfig, {
  prefix: "parallel",
  crews: () => [
    parallelCrew("parallel-tasks", "echo+sleep-3000"),
    ...(installed ? [parallelCrew("parallel-pod-killed", "sleep-8000")] : []),
  ],
});

const byName = (items: Loose[]) => Object.fromEntries(items.map((i) => [i.metadata.name, i]));

/** Every execution of `ids` has its two asynchronous Jobs active (pods pending or running) at once. */
const bothRunning = (namespace: string, ids: string[]) =>
  waitFor(
    "two Jobs running for every execution",
    async () => {
      const jobs = await jobsOf(kubeconfig, namespace);
      const running = (id: string) =>
        jobs.filter((j) => j.metadata.labels["kubecrew.io/execution"] === id && (j.status?.active ?? 0) >= 1);
      return ids.every((id) => running(id).length === 2);
    },
    installed ? 180_000 : 60_000,
    100,
  );

/** Each execution completed with its three Jobs, one reported outcome per task, and every Job succeeded once. */
async function expectEachTaskRanOnce(
  api: Parameters<typeof finalStatus>[0],
  namespace: string,
  crew: string,
  ids: string[],
  timeoutMs: number,
) {
  for (const id of ids) {
    const final = await finalStatus(api, crew, id, timeoutMs);
    expect(final.status, `${id}: ${JSON.stringify(final)}`).toBe("completed");
    const jobs = await jobsOf(kubeconfig, namespace, id);
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual([`${id}-0`, `${id}-1`, `${id}-2`]);
    // One reported outcome per task (besides each pod's steps record): no task ran twice.
    const outcomes = (await resultsOf(kubeconfig, namespace, id)).filter(
      (r) => r.spec.output !== undefined || r.spec.error !== undefined,
    );
    expect(outcomes.map((r) => `${r.spec.taskName} ${r.spec.error ?? "ok"}`).sort()).toEqual([
      "draft ok",
      "facts ok",
      "quotes ok",
    ]);
  }
  await waitFor(
    "every Job complete",
    async () => {
      const jobs = await jobsOf(kubeconfig, namespace);
      const mine = jobs.filter((j) => ids.includes(j.metadata.labels["kubecrew.io/execution"]));
      return mine.length === 3 * ids.length && mine.every((j) => j.status?.succeeded === 1);
    },
    60_000,
  );
  for (const job of await jobsOf(kubeconfig, namespace)) {
    if (ids.includes(job.metadata.labels["kubecrew.io/execution"])) expect(job.status.failed ?? 0).toBe(0);
  }
}

describe("asynchronous tasks as Jobs side by side", () => {
  it("runs both asynchronous tasks' Jobs at once, and creates the third after both results, with exactly their outputs", async () => {
    const { api, namespace } = suite;
    const id = await kickoff(api, "parallel-tasks");
    // Both Jobs exist, and run, while the third does not.
    const both = await waitFor(
      "both asynchronous Jobs active",
      async () => {
        const jobs = byName(await jobsOf(kubeconfig, namespace, id));
        const active = (n: string) => (jobs[n]?.status?.active ?? 0) >= 1;
        return active(`${id}-0`) && active(`${id}-1`) && !jobs[`${id}-2`] && jobs;
      },
      installed ? 120_000 : 60_000,
      100,
    );
    expect(Object.keys(both).sort()).toEqual([`${id}-0`, `${id}-1`]);

    const final = await finalStatus(api, "parallel-tasks", id, 180_000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    const jobs = byName(await jobsOf(kubeconfig, namespace, id));
    const results = await resultsOf(kubeconfig, namespace, id);
    const resultOf = (task: string) => results.find((r) => r.spec.taskName === task && r.spec.output !== undefined);
    // The third Job was created once both asynchronous tasks had reported (timestamps are whole seconds).
    const third = Date.parse(jobs[`${id}-2`].metadata.creationTimestamp);
    for (const task of ["facts", "quotes"]) {
      expect(third).toBeGreaterThanOrEqual(Date.parse(resultOf(task).metadata.creationTimestamp));
    }
    // The echo model answers with the prompt: the third task's holds exactly the two outputs as its context.
    const agent = { name: "writer", role: "Writer", goal: "Write about tides", backstory: "" };
    const task = { index: 2, name: "draft", description: "Draft on tides", expectedOutput: "D" };
    const context = ["facts", "quotes"].map((t) => ({ task: t, output: resultOf(t).spec.output as string }));
    const prompt = buildTaskPrompt({ agent, task, context } as Pick<TaskAssignment, "agent" | "task" | "context">);
    expect(resultOf("draft").spec.output).toContain(prompt.user);
  }, 240_000);
});

describe("bad task context and asynchronous tasks", () => {
  const task = (name: string, extra = "") =>
    `    - { name: ${name}, agent: writer, description: "${name}", expectedOutput: "${name}"${extra} }`;
  const crewWith = (name: string, tasks: string[]) =>
    parallelCrew(name, "mock").replace(/ {2}tasks:\n[\s\S]*?\n {2}runner:/, `  tasks:\n${tasks.join("\n")}\n  runner:`);
  const applyError = (yaml: string) =>
    suite.applyCrew(yaml).then(
      () => "",
      (err: { stderr?: string }) => String(err.stderr ?? err),
    );

  it("refuses at apply a context naming no task, a task taking context from itself, a crew ending with two asynchronous tasks", async () => {
    expect(await applyError(crewWith("parallel-unknown", [task("a"), task("b", ", context: [nobody]")]))).toMatch(
      /Crew "parallel-unknown" is invalid: spec\.tasks: .*a task's context must name tasks of this crew/,
    );
    expect(await applyError(crewWith("parallel-selfish", [task("a"), task("b", ", context: [b]")]))).toMatch(
      /Crew "parallel-selfish" is invalid: spec\.tasks: .*a task cannot take context from itself/,
    );
    const trailing = crewWith("parallel-trailing", [
      task("a"),
      task("b", ", asyncExecution: true"),
      task("c", ", asyncExecution: true"),
    ]);
    expect(await applyError(trailing)).toMatch(
      /Crew "parallel-trailing" is invalid: spec\.tasks: .*a crew may end with at most one asynchronous task/,
    );
  });

  it("reports on the Crew's Ready condition what CEL cannot check: a later task, an async task beside it", async () => {
    const crew = crewWith("parallel-misordered", [
      task("a", ", asyncExecution: true, context: [c]"),
      task("b", ", asyncExecution: true, context: [a]"),
      task("c"),
    ]);
    expect(await applyError(crew)).toBe("");
    const ready = await waitFor("crew parallel-misordered reported not Ready", async () => {
      const got = JSON.parse(
        await kubectl(kubeconfig, ["get", "crew", "parallel-misordered", "-n", suite.namespace, "-o", "json"]),
      );
      return got.status?.conditions?.find(
        (c: { type: string; status: string }) => c.type === "Ready" && c.status === "False",
      );
    });
    expect(ready.reason).toBe("InvalidSpec");
    expect(ready.message).toBe(
      'task "a" takes context from "c", which does not run before it; ' +
        'task "b" is asynchronous and takes context from "a", an asynchronous task that starts with it: make a task between them synchronous, or "b" synchronous',
    );
  });
});

describe.runIf(installed)("the chart's controller pod force-deleted while two tasks run side by side", () => {
  it("runs every task exactly once: the Deployment's new pod takes over the executions", async () => {
    const { api, namespace } = suite;
    const before = await readyPod(kubeconfig, namespace, "controller");
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push(await kickoff(api, "parallel-pod-killed"));
    await bothRunning(namespace, ids);
    // No join's Job yet: the kill comes while only the asynchronous tasks run.
    for (const id of ids) expect(byName(await jobsOf(kubeconfig, namespace, id))[`${id}-2`]).toBeUndefined();
    await forceDeletePod(kubeconfig, namespace, before);
    const after = await replacementPod(kubeconfig, namespace, "controller", before);
    expect(after).not.toBe(before);
    await expectEachTaskRanOnce(api, namespace, "parallel-pod-killed", ids, 300_000);
  }, 600_000);
});

describe.skipIf(installed)("a controller process of the test's own SIGKILLed while two tasks run side by side", () => {
  let system: OwnSystem;
  beforeAll(async () => {
    system = await startOwnSystem(kubeconfig, "parallel-own", {
      crews: [parallelCrew("killed", "sleep-4000")],
      killWith: "SIGKILL",
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it("runs every task exactly once when the controller is SIGKILLed while two tasks run side by side", async () => {
    const { api, namespace } = system;
    let controller = await system.startController({ identity: "replica-a" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await kickoff(api, "killed"));
    // Kill once every execution has both asynchronous Jobs running.
    await waitFor(
      "two Jobs running for every execution",
      async () => {
        const jobs = await jobsOf(kubeconfig, namespace);
        const running = (id: string) =>
          jobs.filter((j) => j.metadata.labels["kubecrew.io/execution"] === id && (j.status?.active ?? 0) >= 1);
        return ids.every((id) => running(id).length === 2);
      },
      60_000,
      100,
    );
    expect(await controller.kill("SIGKILL")).toBeNull();
    await sleep(1500); // the tasks go on while no controller runs
    controller = await system.startController({ identity: "replica-b" });

    await expectEachTaskRanOnce(api, namespace, "killed", ids, 120_000);
    await controller.kill("SIGTERM");
  });
});
