/**
 * A finished 1-task execution as the controller leaves it, for the memory benches: the CrewExecution's spec and final
 * status (with the crew snapshot), its Job — the very object the controller builds (`taskJob`) — with the status the Job
 * controller gives a completed Job, and its CrewTaskResult (the runner's object, `taskResultObject`).
 */
import { buildAssignment } from "../core/assignment.ts";
import type { CrewSpec } from "../core/crew.ts";
import type { DecideInput } from "../core/decision.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { CREW_EXECUTIONS } from "../kube/resources.ts";
import { taskInputs, taskJob } from "../controller/task-job.ts";
import { taskResultObject } from "../runner/kubernetes-io.ts";
import { MOCK_OUTPUT } from "./controller-scale-runner.ts";

/** Seconds, as the apiserver writes timestamps. */
export const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

/** The CrewExecution as a kickoff creates it. */
export function newExecution(crewName: string, namespace: string, name: string) {
  return {
    apiVersion: CREW_EXECUTIONS.apiVersion,
    kind: CREW_EXECUTIONS.kind,
    metadata: { name, namespace },
    spec: { crewRef: { name: crewName }, inputs: { topic: "bench" }, stop: false },
  };
}

export interface FinishedExecution {
  execution: KubeObject;
  executionStatus: Record<string, unknown>;
  job: KubeObject;
  jobStatus: Record<string, unknown>;
  result: KubeObject;
}

/** The objects of one execution of the crew `crewName` (`crew` its spec) that ran from `startedMs` for a second. */
export function finishedExecution(o: {
  crewName: string;
  crew: CrewSpec;
  namespace: string;
  name: string;
  uid: string;
  startedMs: number;
  runnerServiceAccount: string;
}): FinishedExecution {
  const { crewName, crew, namespace, name, uid } = o;
  const execution = newExecution(crewName, namespace, name);
  const spec = execution.spec;
  const ref = { name, namespace, uid, crew: crewName };
  const input = {
    execution: { name, namespace, uid, spec },
    crew,
    observed: {},
    deliveredWebhooks: new Set<string>(),
    now: new Date(o.startedMs),
  } as unknown as DecideInput;
  const assignment = buildAssignment(input, crew, 0);
  const settings = {
    defaultImage: "kubecrew:bench",
    defaultServiceAccount: o.runnerServiceAccount,
    runnerCommand: ["kubecrew", "runner", "--kubernetes", "--assignment"],
  };
  const job = taskJob(ref, assignment, crew.runner, settings, taskInputs(ref, assignment).contextMounts);
  const started = stamp(o.startedMs);
  const ended = stamp(o.startedMs + 1000);
  const done = {
    status: "True",
    lastProbeTime: ended,
    lastTransitionTime: ended,
    reason: "CompletionsReached",
    message: "Reached expected number of succeeded pods",
  };
  const jobStatus = {
    conditions: [
      { type: "SuccessCriteriaMet", ...done },
      { type: "Complete", ...done },
    ],
    startTime: started,
    completionTime: ended,
    succeeded: 1,
    ready: 0,
    terminating: 0,
    uncountedTerminatedPods: {},
  };
  const outcome = {
    taskName: crew.tasks[0]!.name,
    taskIndex: 0,
    agent: assignment.agent.role,
    output: MOCK_OUTPUT,
    executionTime: 0.8,
    attempt: 1,
    tokenUsage: { inputTokens: 120, outputTokens: 60, totalTokens: 180 },
    model: "mock",
  };
  const executionStatus = {
    phase: "Succeeded",
    progress: { completedTasks: 1, totalTasks: 1 },
    progressText: "1/1",
    tasks: [
      {
        name: outcome.taskName,
        agent: outcome.agent,
        phase: "Succeeded",
        startTime: started,
        completionTime: ended,
        executionTime: outcome.executionTime,
      },
    ],
    startTime: started,
    completionTime: ended,
    executionTime: 1,
    conditions: [
      {
        type: "Succeeded",
        status: "True",
        reason: "Succeeded",
        message: "All 1 tasks succeeded",
        lastTransitionTime: ended,
        observedGeneration: 1,
      },
    ],
    observedGeneration: 1,
    crewSpec: crew,
  };
  return {
    execution,
    executionStatus,
    job,
    jobStatus,
    result: taskResultObject(assignment, outcome),
  };
}
