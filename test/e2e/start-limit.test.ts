import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import type { KubeObject } from "../../kube/runtime/client.ts";
import { Informer, objectKey } from "../../kube/runtime/informer.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  JOBS,
  LABEL_CREW,
  LABEL_EXECUTION,
  resourcePath,
} from "../../kube/resources.ts";
import { kubectl } from "./support/kubectl.ts";
import { crewYaml, finalStatus, jobsOf, kickoff, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * The limit on tasks starting at once (KUBECREW_CONTROLLER_MAX_STARTING_TASKS=2) on the real control plane and the
 * local node: 5 executions kicked off at once. Watching the cluster as a user would (Jobs, their pods' readiness as
 * kube-controller-manager reports it, the runners' results), never more than 2 tasks are between their Job's creation
 * and their pod running; the others wait as Pending executions without a Job; tasks already running (each one's LLM
 * call takes 10 s here) hold no slot, so all 5 run side by side; all 5 complete.
 */
const kubeconfig = inject("kubeconfig");
const LIMIT = 2;
const EXECUTIONS = 5;
let system: OwnSystem;
const informers: Informer<KubeObject>[] = [];

interface JobView extends KubeObject {
  status?: {
    ready?: number;
    succeeded?: number;
    failed?: number;
    uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
    conditions?: { type: string; status: string }[];
  };
}

beforeAll(async () => {
  if (installed) return;
  system = await startOwnSystem(kubeconfig, "startlimit", {
    crews: [crewYaml("slow-start", "sleep-10000", { tasks: 1, taskTimeout: 120 })],
    controller: { env: { KUBECREW_CONTROLLER_MAX_STARTING_TASKS: String(LIMIT) } },
  });
});

afterAll(async () => {
  for (const i of informers) await i.stop();
  await system?.stop();
});

/**
 * Watches the namespace's task Jobs and results: how many tasks are starting at each change (a Job whose pod has not
 * been Ready, that has not ended and whose runner reported nothing), and how many pods are Ready at once. A slot is
 * freed here by a pod's readiness (the task then runs 10 s): the Jobs' one watch stream shows that before the Job
 * the controller creates next.
 */
async function watchStarts(): Promise<{
  starting: () => number;
  maxStarting: number;
  maxReady: number;
  sawWaiting: boolean;
}> {
  const { client, namespace } = system;
  const watched = { client, log: silentLogger(), labelSelector: LABEL_EXECUTION, watchTimeoutSeconds: 60 };
  const jobs = new Informer<JobView>({ ...watched, path: resourcePath(JOBS, namespace) });
  const results = new Informer<KubeObject>({ ...watched, path: resourcePath(CREW_TASK_RESULTS, namespace) });
  const executions = new Informer<KubeObject & { status?: { phase?: string } }>({
    ...watched,
    labelSelector: LABEL_CREW,
    path: resourcePath(CREW_EXECUTIONS, namespace),
  });
  informers.push(jobs, results, executions);
  /** Jobs whose pod ran, or whose task ended: their start is over for good. */
  const started = new Set<string>();
  const seen = {
    maxStarting: 0,
    maxReady: 0,
    /** An execution with no phase and no Job while the limit's slots are all taken: one waiting for a slot. */
    sawWaiting: false,
    starting: () => jobs.list().filter((j) => !started.has(objectKey(j))).length,
  };
  const look = () => {
    const reported = new Set(
      results
        .list()
        .map((r) => `${r.metadata!.labels![LABEL_EXECUTION]}-${r.metadata!.labels!["kubecrew.io/task-index"]}`),
    );
    for (const job of jobs.list()) {
      const s = job.status ?? {};
      const ended = s.conditions?.some((c) => ["Complete", "Failed"].includes(c.type) && c.status === "True");
      const terminated =
        (s.uncountedTerminatedPods?.succeeded?.length ?? 0) + (s.uncountedTerminatedPods?.failed?.length ?? 0);
      if (s.ready || s.succeeded || s.failed || terminated || ended || reported.has(job.metadata!.name!)) {
        started.add(objectKey(job));
      }
    }
    seen.maxStarting = Math.max(seen.maxStarting, seen.starting());
    seen.maxReady = Math.max(seen.maxReady, jobs.list().filter((j) => (j.status?.ready ?? 0) >= 1).length);
    if (seen.starting() >= LIMIT) {
      const withJob = new Set(jobs.list().map((j) => j.metadata!.labels![LABEL_EXECUTION]));
      const waiting = executions.list().filter((e) => !e.status?.phase && !withJob.has(e.metadata!.name!));
      if (waiting.length > 0) seen.sawWaiting = true;
    }
  };
  jobs.on(look);
  results.on(look);
  executions.on(look);
  await Promise.all([jobs.start(), results.start(), executions.start()]);
  return seen;
}

describe.skipIf(installed)("a limit of 2 tasks starting at once", () => {
  it("never has more than 2 tasks starting; the rest wait Pending without a Job; running tasks hold no slot; all 5 complete", async () => {
    const { api, namespace } = system;
    const controller = system.controllers[0]!;
    const seen = await watchStarts();
    const ids = await Promise.all(Array.from({ length: EXECUTIONS }, () => kickoff(api, "slow-start")));

    // While executions wait for a slot: they are not Running and have no Job (executions read first, then Jobs: a
    // Running status is written after its Job, so its Job cannot be missing from the later list).
    let sawWaiting = false;
    let maxGauge = 0;
    let maxWaitingGauge = 0;
    const finals: Loose[] = [];
    const sample = async () => {
      const executions = JSON.parse(await kubectl(kubeconfig, ["get", "ce", "-n", namespace, "-o", "json"])).items;
      const withJob = new Set((await jobsOf(kubeconfig, namespace)).map((j) => j.metadata.labels[LABEL_EXECUTION]));
      for (const e of executions) {
        if (!withJob.has(e.metadata.name)) {
          expect(e.status?.phase, `${e.metadata.name} without a Job`).toBeUndefined();
          sawWaiting = true;
        }
      }
    };
    // The gauges on their own loop: a sample of the objects takes two kubectl runs (seconds on a loaded machine), long
    // enough for a wait to begin and end between two reads of the gauges.
    const readGauges = async () => {
      maxGauge = Math.max(maxGauge, await controller.metric("kubecrew_controller_starting_tasks"));
      maxWaitingGauge = Math.max(
        maxWaitingGauge,
        await controller.metric("kubecrew_controller_executions_waiting_to_start"),
      );
    };
    const every = async (ms: number, step: () => Promise<void>) => {
      while (finals.length < EXECUTIONS) {
        await step();
        await new Promise((r) => setTimeout(r, ms));
      }
    };
    const sampling = Promise.all([every(100, sample), every(20, readGauges)]);
    for (const id of ids) finals.push(await finalStatus(api, "slow-start", id, 150_000));
    await sampling;

    for (const final of finals) expect(final, JSON.stringify(final)).toMatchObject({ status: "completed" });
    console.log(
      `tasks starting at once at most: ${seen.maxStarting} (controller's gauge: ${maxGauge}); pods Ready at once:` +
        ` ${seen.maxReady}; executions waiting for a slot at most (gauge): ${maxWaitingGauge}`,
    );
    expect(seen.maxStarting).toBe(LIMIT);
    expect(maxGauge).toBeLessThanOrEqual(LIMIT);
    // Seen by kubectl's samples or, between two of them (each takes two kubectl runs, seconds at load), by the watches.
    expect(sawWaiting || seen.sawWaiting).toBe(true);
    expect(maxWaitingGauge).toBeGreaterThanOrEqual(1);
    // Tasks busy with their LLM call count for nothing: more run at once than may start at once.
    expect(seen.maxReady).toBeGreaterThan(LIMIT);
    expect(seen.starting()).toBe(0);
    expect(await controller.metric("kubecrew_controller_executions_waiting_to_start")).toBe(0);
  });
});
