import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { TaskAssignment, TaskOutcome } from "../core/task-assignment.ts";
import { taskOutcome } from "../core/task-assignment.ts";
import type { TaskResultSpec } from "../core/task-result.ts";
import { isAlreadyExists, KubeApiError, KubeClient } from "../kube/runtime/client.ts";
import { Kubeconfig, type KubeAccess } from "../kube/runtime/kubeconfig.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, resourcePath } from "../kube/resources.ts";
import { CONTEXT_FILES, taskLabels, taskResultName } from "../kube/task-names.ts";
import type { RunnerConfig } from "./config.ts";
import { AssignmentError, readAssignmentFile, type TaskIO } from "./io.ts";
import type { StepSummary, StepTask } from "./step-recorder.ts";

/** Where a runner in a Job pod finds the apiserver and its container's paths: part of the runner's config. */
export type KubernetesIOConfig = RunnerConfig["kubernetes"];

/** The CrewTaskResult a runner creates for its outcome, owned by the execution (deleted with it). */
export function taskResultObject(assignment: TaskAssignment, outcome: TaskOutcome, podName?: string) {
  const execution = assignment.execution;
  if (!execution.namespace || !execution.uid) {
    throw new AssignmentError("Assignment lacks the execution's namespace and uid (needed in Kubernetes mode)");
  }
  const spec: TaskResultSpec = {
    executionRef: { name: execution.id },
    taskName: outcome.taskName,
    taskIndex: outcome.taskIndex,
    agent: outcome.agent,
    ...(outcome.output !== undefined ? { output: outcome.output } : {}),
    ...(outcome.jsonDict !== undefined ? { jsonDict: outcome.jsonDict } : {}),
    ...(outcome.error !== undefined ? { error: outcome.error } : {}),
    ...(outcome.parked !== undefined && outcome.error === undefined ? { parked: outcome.parked } : {}),
    attempt: outcome.attempt,
    ...(assignment.task.revision ? { revision: assignment.task.revision } : {}),
    executionTime: outcome.executionTime,
    tokenUsage: outcome.tokenUsage,
    ...(outcome.model ? { model: outcome.model } : {}),
    ...(outcome.stepCount !== undefined
      ? { steps: outcome.steps ?? [], stepCount: outcome.stepCount, toolsUsed: outcome.toolsUsed ?? [] }
      : {}),
  };
  return {
    apiVersion: CREW_TASK_RESULTS.apiVersion,
    kind: CREW_TASK_RESULTS.kind,
    metadata: {
      ...taskResultName(
        execution.id,
        outcome.taskIndex, // the assignment's task, or in a whole project's run the task that ended
        outcome.error !== undefined,
        podName,
        assignment.task.revision ?? 0,
      ),
      namespace: execution.namespace,
      labels: taskLabels({
        execution: execution.id,
        crew: execution.crew,
        name: outcome.taskName,
        index: outcome.taskIndex,
        revision: assignment.task.revision ?? 0,
      }),
      ownerReferences: [
        { apiVersion: CREW_EXECUTIONS.apiVersion, kind: CREW_EXECUTIONS.kind, name: execution.id, uid: execution.uid },
      ],
    },
    spec,
  };
}

/** The apiserver refused an object for its size (etcd's request limit). */
const tooLarge = (err: unknown): err is KubeApiError =>
  err instanceof KubeApiError && (err.statusCode === 413 || /too large|exceeds/i.test(err.message));
const storeRefused = (err: KubeApiError) => `Task output could not be stored: ${err.message}`;

/** An outcome without output or error: what a running attempt's result says (of a project's `task` when given). */
function progressOutcome(assignment: TaskAssignment, attempt: number, task?: StepTask) {
  return {
    taskName: task?.name ?? assignment.task.name,
    taskIndex: task?.index ?? assignment.task.index,
    agent: task ? task.agent : assignment.agent.role,
    executionTime: 0,
    attempt,
  };
}

/**
 * TaskIO inside a Job pod: the assignment comes from the task's ConfigMap (mounted as a file), the outcome becomes a
 * CrewTaskResult created with the pod's service account (which may create results and nothing else).
 */
export class KubernetesTaskIO implements TaskIO {
  private readonly assignmentPath: string;
  private readonly client: KubeClient;
  private readonly podName: string | undefined;
  private assignment: TaskAssignment | undefined;

  constructor(options: { assignmentPath: string; config: KubernetesIOConfig; kubeConfig?: KubeAccess }) {
    this.assignmentPath = options.assignmentPath;
    this.podName = options.config.podName;
    const kc =
      options.kubeConfig ??
      (options.config.kubeconfigPath ? Kubeconfig.fromFile(options.config.kubeconfigPath) : Kubeconfig.inCluster());
    this.client = new KubeClient(kc, { timeoutMs: 60_000 });
  }

  async readAssignment(): Promise<TaskAssignment> {
    const assignment = await readAssignmentFile(this.assignmentPath);
    await this.readMovedContext(assignment);
    this.assignment = assignment;
    return assignment;
  }

  /** Context outputs too large for the assignment's ConfigMap come from ConfigMaps of their own (see taskInputs). */
  private async readMovedContext(assignment: TaskAssignment): Promise<void> {
    let index: Record<string, string>;
    try {
      index = JSON.parse(await readFile(join(dirname(this.assignmentPath), CONTEXT_FILES), "utf8")) as Record<
        string,
        string
      >;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new AssignmentError(`Cannot read ${CONTEXT_FILES}: ${(error as Error).message}`);
    }
    for (const [j, path] of Object.entries(index)) {
      const entry = assignment.context[Number(j)];
      if (!entry) throw new AssignmentError(`${CONTEXT_FILES} names context entry ${j}, which the assignment lacks`);
      try {
        entry.output = await readFile(path, "utf8");
      } catch (error) {
        throw new AssignmentError(
          `Cannot read the output of "${entry.task}" from ${path}: ${(error as Error).message}`,
        );
      }
    }
  }

  /** The tasks whose steps result this pod has created. */
  private readonly progressCreated = new Set<number>();

  /**
   * The attempt's steps so far on a CrewTaskResult of its own (`<pod>-steps`, no output or error: neither a success
   * nor a failure to the controller), created with the first step and merge-patched after each one, so steps survive
   * the pod and the API streams them while the task runs. A whole project's run has one per task (`<pod>-steps-<index>`
   * for the tasks after the first). Outside a pod (no POD_NAME) there is none.
   */
  async reportSteps(sofar: StepSummary, attempt: number, task?: StepTask): Promise<void> {
    const assignment = this.assignment;
    if (!assignment || !this.podName) return;
    const namespace = assignment.execution.namespace;
    const index = task?.index ?? assignment.task.index;
    const name = index === assignment.task.index ? `${this.podName}-steps` : `${this.podName}-steps-${index}`;
    if (this.progressCreated.has(index)) {
      await this.client.mergePatch(resourcePath(CREW_TASK_RESULTS, namespace, name), { spec: sofar });
      return;
    }
    const started = { ...taskOutcome.parse({ ...progressOutcome(assignment, attempt, task), ...sofar }) };
    const object = taskResultObject(assignment, started, this.podName);
    object.metadata = { ...object.metadata, name, generateName: undefined } as typeof object.metadata;
    try {
      await this.createWithRetry(resourcePath(CREW_TASK_RESULTS, namespace), object);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    this.progressCreated.add(index);
  }

  async reportOutcome(outcome: TaskOutcome): Promise<void> {
    if (!this.assignment) throw new Error("reportOutcome before readAssignment");
    const checked = taskOutcome.parse(outcome);
    const object = taskResultObject(this.assignment, checked, this.podName);
    const path = resourcePath(CREW_TASK_RESULTS, this.assignment.execution.namespace);
    try {
      await this.createWithRetry(path, object);
    } catch (err) {
      if (isAlreadyExists(err)) return; // this attempt's result is already there (a retried request)
      if (tooLarge(err) && checked.error === undefined) {
        // The apiserver refused the size: report that as the task's failure instead of losing the outcome.
        const failed = {
          ...checked,
          output: undefined,
          jsonDict: undefined,
          parked: undefined,
          error: storeRefused(err),
        };
        await this.createWithRetry(path, taskResultObject(this.assignment, failed, this.podName));
        throw new Error(failed.error, { cause: err });
      }
      throw err;
    } finally {
      this.client.close();
    }
  }

  /**
   * A whole project's run: one task's outcome as the task ends; the run's last comes through reportOutcome too. An
   * output the apiserver refuses for its size becomes the task's failure, as in reportOutcome.
   */
  async reportTaskOutcome(outcome: TaskOutcome): Promise<void> {
    if (!this.assignment) throw new Error("reportTaskOutcome before readAssignment");
    const checked = taskOutcome.parse(outcome);
    const path = resourcePath(CREW_TASK_RESULTS, this.assignment.execution.namespace);
    try {
      await this.createWithRetry(path, taskResultObject(this.assignment, checked, this.podName));
    } catch (err) {
      if (isAlreadyExists(err)) return;
      if (!tooLarge(err) || checked.error !== undefined) throw err;
      const failed = { ...checked, output: undefined, jsonDict: undefined, error: storeRefused(err) };
      await this.createWithRetry(path, taskResultObject(this.assignment, failed, this.podName)).catch((again) => {
        if (!isAlreadyExists(again)) throw again;
      });
    }
  }

  private async createWithRetry(path: string, body: unknown): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.create(path, body);
        return;
      } catch (err) {
        const transient = !(err instanceof KubeApiError) || err.statusCode >= 500 || err.statusCode === 429;
        if (!transient || attempt >= 5) throw err;
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }
}
