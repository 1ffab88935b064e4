/**
 * bench/controller-scale: the baseline — the apiserver's raw rate for the writes an execution costs, with no controller
 * logic in between. A plain client does, for every execution at once (one client, as the controller has): create the
 * CrewExecution, patch its Running status (the crew snapshot), and per task create its ConfigMap, its Job (the very
 * objects the controller builds, `taskInputs`/`taskJob`), its CrewTaskResult (the runner's object), and patch the status
 * (the task done, the next one running, or the execution finished).
 */
import { buildAssignment } from "../core/assignment.ts";
import type { CrewSpec } from "../core/crew.ts";
import type { DecideInput } from "../core/decision.ts";
import type { ExecutionStatus, TaskState } from "../core/execution.ts";
import type { KubeClient, KubeObject } from "../kube/runtime/client.ts";
import { CONFIG_MAPS, CREW_EXECUTIONS, CREW_TASK_RESULTS, JOBS, resourcePath } from "../kube/resources.ts";
import { taskInputs, taskJob, type ExecutionRef, type TaskJobSettings } from "../controller/task-job.ts";
import { taskResultObject } from "../runner/kubernetes-io.ts";
import { MOCK_OUTPUT } from "./controller-scale-runner.ts";

const condition = (status: "True" | "Unknown", reason: string, message: string, at: string) => ({
  type: "Succeeded",
  status,
  reason,
  message,
  lastTransitionTime: at,
  observedGeneration: 1,
});

/** The status after `done` of the crew's tasks succeeded (what the controller writes at each step). */
function statusAfter(spec: CrewSpec, done: number, started: string): ExecutionStatus {
  const now = new Date().toISOString();
  const total = spec.tasks.length;
  const finished = done === total;
  const tasks: TaskState[] = spec.tasks.map((t, i) => ({
    name: t.name,
    agent: "bench Writer",
    phase: i < done ? "Succeeded" : i === done ? "Running" : "Pending",
    ...(i <= done ? { startTime: started } : {}),
    ...(i < done ? { completionTime: now, executionTime: 0.01 } : {}),
  }));
  return {
    phase: finished ? "Succeeded" : "Running",
    ...(finished ? {} : { currentTask: spec.tasks[done]!.name }),
    progress: { completedTasks: done, totalTasks: total },
    progressText: `${done}/${total}`,
    tasks,
    startTime: started,
    ...(finished ? { completionTime: now, executionTime: 0.5 } : {}),
    conditions: [
      finished
        ? condition("True", "Succeeded", `All ${total} tasks succeeded`, now)
        : condition("Unknown", "Running", `Task ${done + 1} of ${total} running`, started),
    ],
    observedGeneration: 1,
    ...(done === 0 ? { crewSpec: spec } : {}),
  };
}

/** One execution's writes, one after another (as their causes come one after another); answers when all are done. */
async function oneExecution(
  client: KubeClient,
  namespace: string,
  crew: { name: string; spec: CrewSpec },
  name: string,
  settings: TaskJobSettings,
): Promise<void> {
  const created = await client.create<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace), {
    apiVersion: CREW_EXECUTIONS.apiVersion,
    kind: CREW_EXECUTIONS.kind,
    metadata: { name, namespace },
    spec: { crewRef: { name: crew.name }, inputs: { topic: "bench" } },
  });
  const uid = created.metadata!.uid!;
  const ref: ExecutionRef = { name, namespace, uid, crew: crew.name };
  const statusPath = resourcePath(CREW_EXECUTIONS, namespace, name, "status");
  const started = new Date().toISOString();
  let rv = created.metadata!.resourceVersion;
  const patchStatus = async (status: ExecutionStatus) => {
    const answer = await client.mergePatch<KubeObject>(statusPath, { metadata: { resourceVersion: rv }, status });
    rv = answer.metadata!.resourceVersion;
  };
  await patchStatus(statusAfter(crew.spec, 0, started));
  const observed: DecideInput["observed"] = {};
  for (const [index, task] of crew.spec.tasks.entries()) {
    const input = {
      execution: { name, namespace, uid, spec: { crewRef: { name: crew.name }, inputs: { topic: "bench" } } },
      crew: crew.spec,
      observed,
      deliveredWebhooks: new Set<string>(),
      now: new Date(),
    } as unknown as DecideInput;
    const assignment = buildAssignment(input, crew.spec, index);
    const inputs = taskInputs(ref, assignment);
    for (const cm of inputs.configMaps) await client.create(resourcePath(CONFIG_MAPS, namespace), cm);
    await client.create(
      resourcePath(JOBS, namespace),
      taskJob(ref, assignment, crew.spec.runner, settings, inputs.contextMounts),
    );
    const outcome = {
      taskName: task.name,
      taskIndex: index,
      agent: "bench Writer",
      output: MOCK_OUTPUT,
      executionTime: 0.01,
      attempt: 1,
      tokenUsage: { inputTokens: 120, outputTokens: 60, totalTokens: 180 },
      model: "mock",
    };
    await client.create(resourcePath(CREW_TASK_RESULTS, namespace), taskResultObject(assignment, outcome));
    observed[task.name] = { results: [{ ...outcome }] } as DecideInput["observed"][string];
    await patchStatus(statusAfter(crew.spec, index + 1, started));
  }
}

/** Runs `count` executions' writes all at once; answers the seconds it took. */
export async function baselineWrites(o: {
  client: KubeClient;
  namespace: string;
  crew: { name: string; spec: CrewSpec };
  names: string[];
  settings: TaskJobSettings;
}): Promise<number> {
  const t0 = performance.now();
  await Promise.all(o.names.map((name) => oneExecution(o.client, o.namespace, o.crew, name, o.settings)));
  return (performance.now() - t0) / 1000;
}
