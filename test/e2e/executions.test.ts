import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAsPod as dryRunCreateAs, kubectl, kubectlStatus } from "./support/kubectl.ts";
import {
  applyCrew,
  crewNamespace,
  crewYaml,
  finalStatus,
  configMapsOf,
  jobsOf,
  resultsOf,
  kickoff,
  releaseCrewNamespace,
  RUNNER_SA,
  startClusterApi,
  startControllerProcess,
  status,
  waitFor,
  type ClusterApi,
  type Loose,
  type ControllerProcess,
} from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { LABEL_CREW } from "../../kube/resources.ts";

const kubeconfig = inject("kubeconfig");
let namespace: string;
let controller: ControllerProcess;
let api: ClusterApi;

beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "exec");
  await applyCrew(kubeconfig, namespace, crewYaml("research", "sleep-1500"));
  await applyCrew(kubeconfig, namespace, crewYaml("failing", "fail", { tasks: 2, retries: 1 }));
  await applyCrew(kubeconfig, namespace, crewYaml("slow", "sleep-60000", { tasks: 2 }));
  await applyCrew(kubeconfig, namespace, crewYaml("task-timeout", "sleep-60000", { tasks: 2, taskTimeout: 3 }));
  await applyCrew(kubeconfig, namespace, crewYaml("exec-timeout", "sleep-2500", { tasks: 3, executionTimeout: 4 }));
  await applyCrew(kubeconfig, namespace, crewYaml("big", "size-204800", { tasks: 1 }));
  await applyCrew(kubeconfig, namespace, crewYaml("too-big", "size-1100000", { tasks: 1 }));
  await applyCrew(kubeconfig, namespace, crewYaml("large-context", "size-700000", { tasks: 3 }));
  await applyCrew(kubeconfig, namespace, crewYaml("edited", "sleep-1500", { tasks: 2 }));
  await kubectl(
    kubeconfig,
    ["apply", "-n", namespace, "-f", "-"],
    "apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: no-rights }\n",
  );
  await applyCrew(kubeconfig, namespace, crewYaml("unreported", "mock", { tasks: 1, serviceAccount: "no-rights" }));
  // Against an installed system (E2E_API_URL), its own controller runs the crews and its API answers.
  if (!installed) controller = await startControllerProcess(kubeconfig, namespace);
  api = await startClusterApi(kubeconfig, namespace);
});

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

/** Reasons of the Events recorded on an execution (they are posted without blocking reconciles: wait a moment). */
async function eventReasons(execution: string): Promise<string[]> {
  const read = async () =>
    JSON.parse(
      await kubectl(kubeconfig, [
        "get",
        "events",
        "-n",
        namespace,
        "--field-selector",
        `involvedObject.name=${execution}`,
        "-o",
        "json",
      ]),
    ).items.map((e: { reason: string }) => e.reason) as string[];
  await waitFor("execution events", async () => (await read()).some((r) => r.startsWith("Execution")), 10_000);
  return read();
}

describe("a crew run as Job pods", () => {
  it("goes from kickoff over HTTP through running (current task, progress) to completed with every task's output, agent and time", async () => {
    const id = await kickoff(api, "research");
    const first = await status(api, "research", id);
    expect(first).toMatchObject({ status: "running", state: "RUNNING" });

    const seen = new Set<string>();
    const final = await waitFor(
      `${id} completed`,
      async () => {
        const body = await status(api, "research", id);
        if (body.status === "running") {
          expect(body.progress.total_tasks).toBe(3);
          seen.add(`${body.current_task}:${body.progress.completed_tasks}`);
          return undefined;
        }
        return body;
      },
      90_000,
      100,
    );
    expect([...seen]).toEqual(expect.arrayContaining(["step1:0", "step2:1", "step3:2"]));
    expect(final).toMatchObject({ status: "completed", state: "SUCCESS" });
    expect(final.result.tasks.map((t: Loose) => t.task_id)).toEqual(["step1", "step2", "step3"]);
    for (const t of final.result.tasks) {
      expect(t.agent).toBe("tides Writer");
      expect(t.output).toContain("[mock llm]");
      // The runner's steps reached the CrewTaskResult and the API: one LLM turn, no tools.
      expect(t.steps).toBe(1);
      expect(t.tools_used).toEqual([]);
      expect(t.execution_time).toBeGreaterThan(1);
    }
    expect(final.result.output).toBe(final.result.tasks[2].output);
    expect(final.execution_time).toBeGreaterThan(4);

    const jobs = await jobsOf(kubeconfig, namespace, id);
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual([`${id}-0`, `${id}-1`, `${id}-2`]);
    const results = await resultsOf(kubeconfig, namespace, id);
    // Per task: the success, and the attempt's steps kept while it ran (`<pod>-steps`, no output or error).
    expect(results).toHaveLength(6);
    expect(results.filter((r) => r.metadata.name.endsWith("-steps") && r.spec.output === undefined)).toHaveLength(3);
    expect(results[0].metadata.ownerReferences[0]).toMatchObject({ kind: "CrewExecution", name: id });

    const reasons = await eventReasons(id);
    expect(reasons.filter((r) => r === "TaskStarted")).toHaveLength(3);
    expect(reasons.filter((r) => r === "TaskSucceeded")).toHaveLength(3);
    expect(reasons).toContain("ExecutionSucceeded");

    const table = await kubectl(kubeconfig, ["get", "ce", "-n", namespace, id]);
    const [header, row] = table.trim().split("\n");
    expect(header).toMatch(/^NAME\s+STATUS\s+PROGRESS\s+CURRENT TASK\s+DURATION\s+AGE/);
    expect(row).toMatch(new RegExp(`^${id}\\s+Succeeded\\s+3/3\\s`));
  });

  it("runs the crew as it was at kickoff: editing the Crew meanwhile changes nothing for a running execution", async () => {
    const id = await kickoff(api, "edited");
    await waitFor("first task running", async () => (await status(api, "edited", id)).current_task === "step1");
    await applyCrew(kubeconfig, namespace, crewYaml("edited", "fail", { tasks: 2 }));
    const final = await finalStatus(api, "edited", id);
    expect(final.status).toBe("completed");
    const ce = JSON.parse(await kubectl(kubeconfig, ["get", "ce", id, "-n", namespace, "-o", "json"]));
    expect(ce.status.crewSpec.llm.model).toBe("sleep-1500");
    expect(ce.spec.requestedBy).toEqual({ kind: "org", subject: api.subject });
  });

  it("creates hardened Job pods: owned by the execution, non-root, read-only root, no capabilities, the runner's account", async () => {
    // A Job of this file's crews (their tasks have the default 60 s): against the installed chart the namespace is
    // shared with the other files' executions.
    const ownCrews = new Set([
      "research",
      "failing",
      "slow",
      "big",
      "too-big",
      "large-context",
      "edited",
      "unreported",
    ]);
    const job = (await jobsOf(kubeconfig, namespace)).find((j) => ownCrews.has(j.metadata.labels?.[LABEL_CREW]));
    expect(job, "a Job of this file's crews").toBeDefined();
    expect(job.metadata.ownerReferences[0]).toMatchObject({ kind: "CrewExecution", controller: true });
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    expect(job.spec.template.spec.serviceAccountName).toBe(RUNNER_SA);
    expect(job.spec.activeDeadlineSeconds).toBe(60);
    const container = job.spec.template.spec.containers[0];
    expect(job.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
  });

  it("reports a task that exhausts its retries with the runner's own error message", async () => {
    const id = await kickoff(api, "failing");
    const final = await finalStatus(api, "failing", id);
    expect(final).toMatchObject({ status: "error", state: "FAILED" });
    expect(final.error).toContain('Task "step1" failed');
    expect(final.error).toContain("mock llm: failure requested");
    const [job] = await jobsOf(kubeconfig, namespace, id);
    expect(job.status.failed).toBe(2); // backoffLimit 1: two attempts
    expect(await eventReasons(id)).toEqual(expect.arrayContaining(["TaskStarted", "TaskFailed", "ExecutionFailed"]));
  });

  it("reports why a runner that may not write its result failed, from the pod's last log line", async () => {
    const id = await kickoff(api, "unreported");
    const final = await finalStatus(api, "unreported", id);
    expect(final.status).toBe("error");
    expect(final.error).toMatch(/^Task "step1" failed: Cannot report the outcome: .*403.*forbidden/);
  });

  it("stops a running execution: its Job is deleted, the status says so, a second stop answers 400", async () => {
    const id = await kickoff(api, "slow");
    await waitFor("first Job running", async () =>
      (await jobsOf(kubeconfig, namespace, id)).find((j) => (j.status?.active ?? 0) > 0),
    );
    const stop = await api.call(`/crews/slow/stop/${id}`, { method: "POST" });
    expect(stop.status).toBe(200);
    const final = await finalStatus(api, "slow", id, 30_000);
    expect(final).toMatchObject({ status: "error", state: "FAILED", error: "Execution stopped" });
    await waitFor("Job deleted", async () => (await jobsOf(kubeconfig, namespace, id)).length === 0, 30_000);
    const pods = async () =>
      (
        await kubectl(kubeconfig, ["get", "pods", "-n", namespace, "-l", `kubecrew.io/execution=${id}`, "-o", "name"])
      ).trim();
    // 60 s: on a busy kind node a pod stopped while its container is still being created ends only once the
    // container exists (the fresh-clone run of 7150f09 saw more than 30 s there); the runner itself ends on SIGTERM.
    await waitFor("its pod (and so the runner process) gone", async () => (await pods()) === "", 60_000);
    expect(await eventReasons(id)).toContain("ExecutionStopped");
    const again = await api.call(`/crews/slow/stop/${id}`, { method: "POST" });
    expect(again.status).toBe(400);
  });

  it("ends a task that runs out of time (activeDeadlineSeconds) with an error naming the task", async () => {
    const id = await kickoff(api, "task-timeout");
    const final = await finalStatus(api, "task-timeout", id, 60_000);
    expect(final).toMatchObject({ status: "error" });
    expect(final.error).toBe('Task "step1" timed out after 3s');
  });

  it("ends an execution that runs out of time with an error naming the task it was running", async () => {
    const id = await kickoff(api, "exec-timeout");
    const final = await finalStatus(api, "exec-timeout", id, 60_000);
    expect(final).toMatchObject({ status: "error" });
    expect(final.error).toMatch(/^Execution timed out after 4s while running task "step[1-3]"$/);
    await waitFor(
      "running Job removed",
      async () => (await jobsOf(kubeconfig, namespace, id)).every((j) => !(j.status?.active > 0)),
      30_000,
    );
  });

  it("delivers a 200 KiB output whole", async () => {
    const id = await kickoff(api, "big");
    const final = await finalStatus(api, "big", id);
    expect(final.status).toBe("completed");
    expect(final.result.output).toHaveLength(204_800);
    expect(final.result.tasks[0].output).toHaveLength(204_800);
  });

  it("passes earlier outputs larger than one ConfigMap can hold to the next task whole", async () => {
    const id = await kickoff(api, "large-context");
    const final = await finalStatus(api, "large-context", id);
    expect(final.status, JSON.stringify(final).slice(0, 300)).toBe("completed");
    expect(final.result.tasks.map((t: Loose) => t.output.length)).toEqual([700_000, 700_000, 700_000]);
    const names = await configMapsOf(kubeconfig, namespace, id);
    expect(names).toContain(`${id}-2-c0`); // task 3's context (1.4 MB) did not fit in its own ConfigMap
  });

  it("fails a task whose output is above 1 MiB with a clear error instead of truncating it", async () => {
    const id = await kickoff(api, "too-big");
    const final = await finalStatus(api, "too-big", id);
    expect(final.status).toBe("error");
    expect(final.error).toMatch(/Task "step1" failed: Task output is 1100000 bytes, above the 1 MiB limit/);
  });
});

describe("the runner's service account", () => {
  it("may create the results of its own task only (the admission policy checks the pod its token is bound to)", async () => {
    const result = (execution: string) => `apiVersion: kubecrew.io/v1alpha1
kind: CrewTaskResult
metadata: { name: ${execution}-0, namespace: ${namespace}, labels: { kubecrew.io/execution: ${execution}, kubecrew.io/task-index: "0" } }
spec: { executionRef: { name: ${execution} }, taskName: step1, taskIndex: 0, agent: a, output: forged, executionTime: 1 }
`;
    const createAsPod = (execution: string, pod: string) =>
      dryRunCreateAs(kubeconfig, { namespace, serviceAccount: RUNNER_SA, pod }, result(execution));
    await waitFor(
      "policy in force",
      async () => (await createAsPod("other-execution", "mine-0-abcde")).code !== 0,
      20_000,
    );
    const denied = await createAsPod("other-execution", "mine-0-abcde");
    expect(denied.stderr).toContain("a task pod may create only the results of its own task");
    expect((await createAsPod("mine", "mine-0-abcde")).code).toBe(0);
  });

  it("may create and patch CrewTaskResults and nothing else", async () => {
    const as = ["--as", `system:serviceaccount:${namespace}:${RUNNER_SA}`, "-n", namespace];
    const can = async (verb: string, resource: string) =>
      (await kubectlStatus(kubeconfig, ["auth", "can-i", verb, resource, ...as])).code === 0;
    const matrix: [string, string, boolean][] = [
      ["create", "crewtaskresults.kubecrew.io", true],
      ["patch", "crewtaskresults.kubecrew.io", true],
      ["get", "crewtaskresults.kubecrew.io", false],
      ["list", "crewtaskresults.kubecrew.io", false],
      ["update", "crewtaskresults.kubecrew.io", false],
      ["delete", "crewtaskresults.kubecrew.io", false],
      ["get", "crewexecutions.kubecrew.io", false],
      ["patch", "crewexecutions.kubecrew.io", false],
      ["update", "crewexecutions.kubecrew.io/status", false],
      ["get", "crews.kubecrew.io", false],
      ["create", "jobs.batch", false],
      ["create", "pods", false],
      ["get", "configmaps", false],
      ["get", "secrets", false],
      ["list", "secrets", false],
      ["create", "events", false],
    ];
    const answers = await Promise.all(
      matrix.map(async ([verb, resource]) => [verb, resource, await can(verb, resource)]),
    );
    expect(answers).toEqual(matrix);
  });
});
