import { randomUUID } from "node:crypto";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createKubernetesBackend, type KubernetesBackend } from "../../api/kubernetes-backend.ts";
import { silentLogger } from "../../core/logger.ts";
import { KubeClient } from "../../kube/runtime/client.ts";
import { CREWS, CREW_EXECUTIONS, CREW_TASK_RESULTS, LABEL_EXECUTION, resourcePath } from "../../kube/resources.ts";
import { applyCrew, createNamespace, crewYaml, deleteNamespace, waitFor } from "./support/fixture.ts";

/**
 * The cluster API's backend tells the event stream of each change its informers see (instead of being polled), and
 * hands every reader of an unchanged execution the same view, so 1,000 streams of one execution share one read.
 */
const kubeconfig = inject("kubeconfig");
let namespace: string;
let client: KubeClient;
let backend: KubernetesBackend;
const id = randomUUID();
const step = (index: number) => ({
  index,
  kind: "tool",
  tool: "lookup",
  output: `result ${index}`,
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 1,
});

beforeAll(async () => {
  namespace = await createNamespace(kubeconfig, "changes");
  await applyCrew(kubeconfig, namespace, crewYaml("stream", "mock", { tasks: 1 }));
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  client = new KubeClient(kc);
  await client.create(resourcePath(CREW_EXECUTIONS, namespace), {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "CrewExecution",
    metadata: { name: id, namespace },
    spec: { crewRef: { name: "stream" }, inputs: { topic: "x" } },
  });
  await client.create(resourcePath(CREW_TASK_RESULTS, namespace), {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "CrewTaskResult",
    metadata: { name: `${id}-steps`, namespace, labels: { [LABEL_EXECUTION]: id } },
    spec: {
      executionRef: { name: id },
      taskName: "step1",
      taskIndex: 0,
      agent: "Writer",
      executionTime: 0,
      steps: [step(0)],
      stepCount: 1,
    },
  });
  backend = await createKubernetesBackend({ kubeConfig: kc, namespace, log: silentLogger() });
});

afterAll(async () => {
  await backend?.stop();
  client?.close();
  if (namespace) await deleteNamespace(kubeconfig, namespace);
});

describe("the Kubernetes backend's change notifications", () => {
  it("tells subscribers of a result patch and of a status patch, and shares one view until something changes", async () => {
    await waitFor("the execution in the cache", async () => (await backend.getExecution("stream", id))?.results.step1);
    const first = await backend.getExecution("stream", id);
    expect(await backend.getExecution("stream", id)).toBe(first);
    const [a, b] = await Promise.all([backend.getExecution("stream", id), backend.getExecution("stream", id)]);
    expect(a).toBe(b);

    let changes = 0;
    const unsubscribe = backend.onExecutionChange!(id, () => changes++);
    await client.mergePatch(resourcePath(CREW_TASK_RESULTS, namespace, `${id}-steps`), {
      spec: { steps: [step(0), step(1)], stepCount: 2 },
    });
    await waitFor("a change for the result patch", async () => changes >= 1);
    const afterPatch = await backend.getExecution("stream", id);
    expect(afterPatch).not.toBe(first);
    expect(afterPatch!.results.step1![0]!.steps!.map((s) => s.index)).toEqual([0, 1]);

    const before = changes;
    await client.mergePatch(`${resourcePath(CREW_EXECUTIONS, namespace, id)}/status`, {
      status: { phase: "Running" },
    });
    await waitFor("a change for the status patch", async () => changes > before);
    expect((await backend.getExecution("stream", id))!.status?.phase).toBe("Running");

    unsubscribe();
    const settled = changes;
    await client.mergePatch(resourcePath(CREW_TASK_RESULTS, namespace, `${id}-steps`), {
      spec: { steps: [step(0), step(1), step(2)], stepCount: 3 },
    });
    await waitFor(
      "the third step in the cache",
      async () => (await backend.getExecution("stream", id))!.results.step1![0]!.steps!.length === 3,
    );
    expect(changes).toBe(settled);
  });

  it("shows no result whose name is not its task index's in the crew the execution started on", async () => {
    // A runner may write results only for its own task index; one under another task's name is not that task's.
    const crew = await client.get<{ spec: unknown }>(resourcePath(CREWS, namespace, "stream"));
    await client.mergePatch(`${resourcePath(CREW_EXECUTIONS, namespace, id)}/status`, {
      status: { phase: "Running", crewSpec: crew.spec },
    });
    await client.create(resourcePath(CREW_TASK_RESULTS, namespace), {
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "CrewTaskResult",
      metadata: { name: `${id}-forged`, namespace, labels: { [LABEL_EXECUTION]: id } },
      spec: {
        executionRef: { name: id },
        taskName: "step2",
        taskIndex: 0,
        agent: "Writer",
        output: "forged",
        executionTime: 0,
      },
    });
    await client.create(resourcePath(CREW_TASK_RESULTS, namespace), {
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "CrewTaskResult",
      metadata: { name: `${id}-own`, namespace, labels: { [LABEL_EXECUTION]: id } },
      spec: {
        executionRef: { name: id },
        taskName: "step1",
        taskIndex: 0,
        agent: "Writer",
        output: "own",
        executionTime: 0,
      },
    });
    await waitFor(
      "the task's own second result in the view",
      async () => (await backend.getExecution("stream", id))!.results.step1?.length === 2,
    );
    const view = (await backend.getExecution("stream", id))!;
    expect(view.status?.crewSpec?.tasks.map((t) => t.name)).toEqual(["step1"]);
    expect(Object.keys(view.results)).toEqual(["step1"]);
    expect(view.results.step1!.map((r) => r.output)).toContain("own");
  });
});
