import { setCondition } from "../core/conditions.ts";
import type { FlowDecision, FlowEvent, FlowRunState } from "../core/flow/decide-flow.ts";
import { flowDefinition, type FlowDefinition } from "../core/flow/definition.ts";
import type { FlowExecutionStatus, MethodRunStatus } from "../core/flow/flow-resources.ts";
import type { Json } from "../core/json.ts";
import { methodResultName } from "../kube/flow-names.ts";
import type { CachedTaskResult } from "../kube/typed-objects.ts";

/**
 * A flow run's status as its graph advances — the methods started, the progress counted, the end written — pure
 * functions of the status before and the graph's decision, and what the method runs' results say; the run reconciler
 * writes what they answer.
 */

/**
 * Each run's definition as parsed, keyed by the status's definition object: the cache hands out the same object until
 * the status is written again, so a look at an `each` (one per item event) does not parse the whole flow again.
 */
const parsedDefinitions = new WeakMap<object, FlowDefinition>();

export function definitionOf(status: FlowExecutionStatus): FlowDefinition {
  const held = status.definition as object;
  let definition = parsedDefinitions.get(held);
  if (!definition) parsedDefinitions.set(held, (definition = flowDefinition.parse(held)));
  return definition;
}

/** The graph's answer applied to the status: the methods it starts, or the run's end. */
export function applyDecision(
  status: FlowExecutionStatus,
  definition: FlowDefinition,
  decision: FlowDecision,
  now: string,
): FlowExecutionStatus {
  const methods: MethodRunStatus[] = [
    ...(status.methods ?? []),
    ...decision.start.map((a) => ({ id: a.id, method: a.method, phase: "Running" as const, startTime: now })),
  ];
  const next = { ...status, methods, graph: decision.state as unknown as Json };
  if (decision.end) {
    return finished(next, decision.end.phase, decision.end.phase === "Failed" ? decision.end.error : undefined, now);
  }
  return withProgress(next, definition);
}

/** The methods done against the flow's count, and the method running (or waited on) now. */
export function withProgress(status: FlowExecutionStatus, definition: FlowDefinition): FlowExecutionStatus {
  const done = (status.methods ?? []).filter((m) => m.phase === "Succeeded").length;
  const total = Math.max(done, Object.keys(definition.methods).length);
  const current = status.waiting?.method ?? (status.methods ?? []).filter((m) => m.phase === "Running").at(-1)?.method;
  const next: FlowExecutionStatus = {
    ...status,
    progress: { completedMethods: done, totalMethods: total },
    progressText: `${done}/${total}`,
  };
  if (current) next.currentMethod = current;
  else delete next.currentMethod;
  return next;
}

/** The run ended: its phase, end time and duration, and the progress as it stands. */
export function finished(
  status: FlowExecutionStatus,
  phase: "Succeeded" | "Failed" | "Stopped",
  error: string | undefined,
  now: string,
  startTime = status.startTime ?? now,
): FlowExecutionStatus {
  const next: FlowExecutionStatus = {
    ...status,
    phase,
    completionTime: now,
    executionTime: Math.max(0, (Date.parse(now) - Date.parse(startTime)) / 1000),
    ...(error ? { error } : {}),
  };
  delete next.currentMethod;
  delete next.waiting;
  const done = (status.methods ?? []).filter((m) => m.phase === "Succeeded").length;
  next.progress = { completedMethods: done, totalMethods: Math.max(done, status.progress?.totalMethods ?? done) };
  next.progressText = `${done}/${next.progress.totalMethods}`;
  return next;
}

export function outcomeOf(result: CachedTaskResult): { outcome?: string } {
  const outcome = result.spec.jsonDict?.outcome;
  return typeof outcome === "string" ? { outcome } : {};
}

/** CrewAI's `outputs.<method>`: each method's latest output, from the results of the runs that ended. */
export function outputsOf(
  graph: FlowRunState,
  results: Map<string, CachedTaskResult>,
  run: string,
): Record<string, Json> {
  const outputs: Record<string, Json> = {};
  const latest: Record<string, number> = {};
  for (const result of results.values()) {
    const { taskName, taskIndex, jsonDict, error } = result.spec;
    if (error || !jsonDict || result.metadata.name !== methodResultName(run, `${taskName}#${taskIndex}`)) continue;
    if (graph.running.some((a) => a.id === `${taskName}#${taskIndex}`)) continue;
    if ((latest[taskName] ?? 0) > taskIndex) continue;
    latest[taskName] = taskIndex;
    outputs[taskName] = (jsonDict.output ?? null) as Json;
  }
  return outputs;
}

/** The condition a run holds while a human_feedback waits: its lastTransitionTime is when the wait began. */
export const WAITING_CONDITION = "WaitingForInput";

/**
 * The run's status once a method run ended, before the graph decides what comes next: the method marked, and a wait
 * it held for feedback answered.
 */
export function methodEnded(
  current: FlowExecutionStatus,
  event: Exclude<FlowEvent, { type: "kickoff" }>,
  now: string,
): FlowExecutionStatus {
  const status = structuredClone(current);
  const activation = event.activation;
  status.methods = (status.methods ?? []).map((m) =>
    m.id !== activation
      ? m
      : {
          ...m,
          phase: event.type === "failed" ? "Failed" : "Succeeded",
          completionTime: now,
          ...(event.type === "failed" ? { error: event.error } : {}),
          ...(event.type === "completed" && event.outcome !== undefined ? { outcome: event.outcome } : {}),
        },
  );
  if (status.waiting?.activation === activation) {
    delete status.waiting;
    status.phase = "Running";
    status.conditions = setCondition(
      status.conditions,
      { type: WAITING_CONDITION, status: "False", reason: "Answered", message: "" },
      now,
    );
  }
  return status;
}
