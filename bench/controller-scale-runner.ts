/**
 * bench/controller-scale: the stand-in for the runner. KWOK's pods run nothing, so this does the runner's one write:
 * when a task's pod is Running (or already done), it creates the task's CrewTaskResult — the same object the runner
 * creates (`taskResultObject`, runner/kubernetes-io.ts) with a mock agent's output — and notes when the apiserver
 * answered, the start of the "result → status" latency.
 */
import { silentLogger } from "../core/logger.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import type { KubeClient } from "../kube/runtime/client.ts";
import { isAlreadyExists, type KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import {
  CREW_TASK_RESULTS,
  LABEL_CREW,
  LABEL_EXECUTION,
  LABEL_TASK,
  LABEL_TASK_INDEX,
  PODS,
  resourcePath,
} from "../kube/resources.ts";
import { taskResultObject } from "../runner/kubernetes-io.ts";
import { epochMs } from "./controller-scale-observer.ts";

/** What a mock agent answers: a paragraph, about what a short real answer weighs. */
export const MOCK_OUTPUT = "A short report on bench. ".repeat(12).trim();

interface PodView extends KubeObject {
  status?: { phase?: string };
}

/** A pod as the stand-in keeps it: its name, labels and phase (thousands of pods, no need for the rest). */
function podView(pod: PodView): PodView {
  const m = pod.metadata ?? {};
  return {
    metadata: { name: m.name, namespace: m.namespace, resourceVersion: m.resourceVersion, labels: m.labels },
    status: { phase: pod.status?.phase },
  };
}

export class RunnerStandIn {
  /** `<execution>/<task index>` → when the result's create was answered (epoch ms, controller-scale-observer.ts). */
  readonly reported = new Map<string, number>();
  private readonly pods: Informer<PodView>;
  private readonly client: KubeClient;
  private readonly uidOf: (execution: string) => string | undefined;
  private readonly started = new Set<string>();
  failures = 0;

  constructor(o: { client: KubeClient; namespace: string; uidOf: (execution: string) => string | undefined }) {
    this.client = o.client;
    this.uidOf = o.uidOf;
    this.pods = new Informer<PodView>({
      client: o.client,
      path: resourcePath(PODS, o.namespace),
      labelSelector: LABEL_EXECUTION,
      // Only pods past Pending (Running, then Succeeded): the apiserver sends this watch about half of each pod's
      // changes (not its creation and binding). The stand-in is no part of a real cluster (there the runner is in the
      // pod and watches nothing), so what it costs the apiserver is kept small.
      fieldSelector: "status.phase!=Pending",
      log: silentLogger(),
      transform: podView,
    });
    this.pods.on((event, pod) => {
      if (event !== "delete" && (pod.status?.phase === "Running" || pod.status?.phase === "Succeeded"))
        this.report(pod);
    });
  }

  start(): Promise<void> {
    return this.pods.start();
  }

  stop(): Promise<void> {
    return this.pods.stop();
  }

  private report(pod: PodView): void {
    const labels = pod.metadata?.labels ?? {};
    const execution = labels[LABEL_EXECUTION];
    const index = Number(labels[LABEL_TASK_INDEX]);
    const uid = execution ? this.uidOf(execution) : undefined;
    if (!execution || !uid || !Number.isInteger(index)) return;
    const key = `${execution}/${index}`;
    if (this.started.has(key)) return;
    this.started.add(key);
    const namespace = pod.metadata!.namespace!;
    const taskName = labels[LABEL_TASK] ?? `task-${index}`;
    const assignment = {
      execution: { id: execution, crew: labels[LABEL_CREW] ?? "", namespace, uid },
      task: { index, name: taskName, description: "", expectedOutput: "" },
    } as TaskAssignment;
    const result = taskResultObject(assignment, {
      taskName,
      taskIndex: index,
      agent: "bench Writer",
      output: MOCK_OUTPUT,
      executionTime: 0.01,
      attempt: 1,
      tokenUsage: { inputTokens: 120, outputTokens: 60, totalTokens: 180 },
      model: "mock",
    });
    this.client.create(resourcePath(CREW_TASK_RESULTS, namespace), result).then(
      () => this.reported.set(key, epochMs()),
      (err: unknown) => {
        if (isAlreadyExists(err)) return;
        this.failures++;
        this.started.delete(key); // the pod's next event tries again
      },
    );
  }
}
