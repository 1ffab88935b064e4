import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { projectJobName, taskJobName } from "../../kube/task-names.ts";
import { createAsPod as dryRunCreateAs, kubectl } from "./support/kubectl.ts";
import { crewNamespace, releaseCrewNamespace, RUNNER_SA, waitFor } from "./support/fixture.ts";

/**
 * The runner results policy (controller/manifests/runner-results-policy.yaml; on kind also the chart's copy, bound to
 * the release namespace) as the apiserver enforces it for a request made with a pod-bound token of the runner's
 * account: a task's pod may write its own task's results only; a whole CrewAI project's pod (its Job <execution>-p,
 * spec.runner.crew) may write every task's of its own execution — and nothing of another execution, nor in another
 * namespace. Requests are made as the runner's account with the pod's name as its token would carry it (server-side
 * dry runs: nothing is stored). Pods are named as the Job controller names them: <Job>-<5 characters>.
 */
const kubeconfig = inject("kubeconfig");
const execution = randomUUID();
const other = randomUUID();
const SUFFIX = "x7k2p";
const projectPod = `${projectJobName(execution)}-${SUFFIX}`;
const taskPod = (index: number, revision = 0) => `${taskJobName(execution, index, revision)}-${SUFFIX}`;
let namespace: string;
let elsewhere: string;

beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "results-policy");
  // A second namespace where the runner's account of the first one holds the same rights (a RoleBinding there).
  elsewhere = `e2e-results-elsewhere-${Math.random().toString(36).slice(2, 7)}`;
  await kubectl(kubeconfig, ["create", "namespace", elsewhere]);
  await kubectl(
    kubeconfig,
    ["apply", "-f", "-"],
    `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: results, namespace: ${elsewhere} }
rules: [{ apiGroups: [kubecrew.io], resources: [crewtaskresults], verbs: [create, patch] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: results, namespace: ${elsewhere} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: results }
subjects: [{ kind: ServiceAccount, name: ${RUNNER_SA}, namespace: ${namespace} }]
`,
  );
}, 120_000);

afterAll(async () => {
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
  if (elsewhere) await kubectl(kubeconfig, ["delete", "namespace", elsewhere, "--wait=false", "--ignore-not-found"]);
});

interface Forged {
  execution: string;
  index: number;
  /** The kubecrew.io/task-index label when it differs from spec.taskIndex. */
  label?: string;
  in?: string;
}

/** Creates (server-side dry run) a result as the runner's account, its token bound to `pod`. */
async function createAsPod(pod: string, result: Forged): Promise<{ allowed: boolean; stderr: string }> {
  const ns = result.in ?? namespace;
  const yaml = `apiVersion: kubecrew.io/v1alpha1
kind: CrewTaskResult
metadata:
  name: ${result.execution}-${result.index}
  namespace: ${ns}
  labels: { kubecrew.io/execution: ${result.execution}, kubecrew.io/task-index: "${result.label ?? result.index}" }
spec: { executionRef: { name: ${result.execution} }, taskName: t${result.index}, taskIndex: ${result.index}, agent: a, output: forged, executionTime: 1, attempt: 1 }
`;
  const { code, stderr } = await dryRunCreateAs(kubeconfig, { namespace, serviceAccount: RUNNER_SA, pod }, yaml);
  return { allowed: code === 0, stderr };
}

describe("the runner results policy", () => {
  beforeAll(async () => {
    // In force once it refuses what only this policy refuses: the pod of execution <execution>-1's first task
    // writing task 1 of <execution> (its name begins as that task's pods' names do).
    await waitFor(
      "the policy in force",
      async () => !(await createAsPod(`${execution}-1-0-${SUFFIX}`, { execution, index: 1 })).allowed,
      30_000,
    );
  }, 60_000);

  it("lets a whole project's pod write every task's result of its own execution", async () => {
    expect(await createAsPod(projectPod, { execution, index: 0 })).toMatchObject({ allowed: true });
    expect(await createAsPod(projectPod, { execution, index: 1 })).toMatchObject({ allowed: true });
    expect(await createAsPod(projectPod, { execution, index: 7 })).toMatchObject({ allowed: true });
  });

  it("refuses a whole project's pod another execution's results, and another namespace's", async () => {
    const foreign = await createAsPod(projectPod, { execution: other, index: 1 });
    expect(foreign.allowed).toBe(false);
    expect(foreign.stderr).toContain("a task pod may create only the results of its own task");
    const away = await createAsPod(projectPod, { execution, index: 1, in: elsewhere });
    expect(away.allowed).toBe(false);
    expect(away.stderr).toContain("a task pod may create results in its own namespace only");
  });

  it("keeps a task's pod to its own task, its own execution and its own namespace", async () => {
    expect(await createAsPod(taskPod(0), { execution, index: 0 })).toMatchObject({ allowed: true });
    // A revision of a task a person sent back runs in a Job of its own, <execution>-<index>-r<revision>.
    expect(await createAsPod(taskPod(1, 2), { execution, index: 1 })).toMatchObject({ allowed: true });
    const later = await createAsPod(taskPod(0), { execution, index: 1 });
    expect(later.allowed).toBe(false);
    expect(later.stderr).toContain("a task pod may create only the results of its own task");
    expect((await createAsPod(taskPod(0), { execution: other, index: 0 })).allowed).toBe(false);
    // Its label naming its own task while the result says another; the result its own, the label another's.
    const relabelled = await createAsPod(taskPod(0), { execution, index: 1, label: "0" });
    expect(relabelled.allowed).toBe(false);
    expect(relabelled.stderr).toContain("a task pod may create only the results of its own task");
    const mislabelled = await createAsPod(taskPod(0), { execution, index: 0, label: "1" });
    expect(mislabelled.allowed).toBe(false);
    expect(mislabelled.stderr).toContain("the kubecrew.io/task-index label must be the result's spec.taskIndex");
    const away = await createAsPod(taskPod(0), { execution, index: 0, in: elsewhere });
    expect(away.allowed).toBe(false);
    expect(away.stderr).toContain("a task pod may create results in its own namespace only");
  });

  it("takes no other execution's pod for a project's or a task's, whatever its name begins with", async () => {
    // The first task's pod of an execution named <execution>-p-x, and of one named <execution>-1.
    for (const pod of [`${execution}-p-x-0-${SUFFIX}`, `${execution}-1-0-${SUFFIX}`, `${execution}-p-${SUFFIX}z`]) {
      const forged = await createAsPod(pod, { execution, index: 1 });
      expect(forged.allowed, pod).toBe(false);
      expect(forged.stderr).toContain("a task pod may create only the results of its own task");
    }
  });
});
