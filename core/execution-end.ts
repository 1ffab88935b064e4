import type { CrewSpec } from "./crew.ts";
import { setCondition } from "./conditions.ts";
import type { Action, DecideInput, Decision } from "./decision.ts";
import type { ExecutionStatus, TaskState } from "./execution.ts";
import { successfulResult } from "./observed-task.ts";
import { executionEvent, transitionEvents } from "./transition-events.ts";
import { runningIndexes, type FailureReason, type TaskVerdict } from "./task-verdict.ts";

/** How decide() (decide.ts) ends an execution: a task failed, a stop, a timeout, or every task done. */

export const seconds = (from: string, to: Date) => Math.max(0, (to.getTime() - Date.parse(from)) / 1000);
export const round = (n: number) => Math.round(n * 1000) / 1000;

export function stopTask(spec: CrewSpec, index: number, revisions: number[]): Action {
  const revision = revisions[index] ?? 0;
  return { type: "stopTask", index, taskName: spec.tasks[index]!.name, ...(revision ? { revision } : {}) };
}

/**
 * The task at `index` failed: it and the execution end as Failed with the task's message, and the tasks running
 * beside it are stopped (CrewAI fails the kickoff with an asynchronous task's error too).
 */
export function failTask(
  input: DecideInput,
  spec: CrewSpec,
  tasks: TaskState[],
  index: number,
  failure: { message: string; reason: FailureReason },
  actions: Action[],
  startTime: string,
): Decision {
  const nowIso = input.now.toISOString();
  const name = spec.tasks[index]!.name;
  const known = input.execution.status?.tasks?.find((t) => t.name === name);
  Object.assign(tasks[index]!, {
    phase: "Failed",
    startTime: tasks[index]!.startTime ?? known?.startTime ?? input.observed[name]?.run?.startTime ?? nowIso,
    completionTime: nowIso,
    message: failure.message,
  });
  const beside = runningIndexes(input, spec).filter((i) => i !== index);
  const revisions = tasks.map((t) => t.revision ?? 0);
  for (const i of beside) actions.push(stopTask(spec, i, revisions));
  for (const [i, state] of tasks.entries()) {
    const going = state.phase === "Running" || state.phase === "WaitingForInput" || beside.includes(i);
    if (i === index || !going) continue;
    const startedAt = state.startTime ?? input.observed[state.name]?.run?.startTime ?? nowIso;
    Object.assign(state, {
      phase: "Stopped",
      startTime: startedAt,
      completionTime: nowIso,
      message: `Stopped: ${failure.message}`,
    });
  }
  return finish(
    input,
    spec,
    { phase: "Failed", reason: failure.reason, message: failure.message, tasks },
    actions,
    startTime,
  );
}

const actionOrder: Record<Action["type"], number> = { startTask: 0, stopTask: 0, webhook: 1, setStatus: 2, event: 3 };

/** The order documented on Decision; the sort is stable, so actions of one kind keep theirs. */
export function inOrder(actions: Action[]): Action[] {
  return [...actions].sort((a, b) => actionOrder[a.type] - actionOrder[b.type]);
}

/**
 * After a stop or an execution timeout: succeeded tasks stay succeeded; running ones, and answers still waiting for a
 * person, take the final phase.
 */
export function markDoneTasks(
  input: DecideInput,
  tasks: TaskState[],
  verdicts: TaskVerdict[],
  running: number[],
  phase: "Stopped" | "Failed",
  message: string,
): TaskState[] {
  const { now } = input;
  const previous = input.execution.status ?? {};
  return tasks.map((state, index) => {
    const known = previous.tasks?.find((t) => t.name === state.name);
    const verdict = verdicts[index]!;
    if (verdict.state === "succeeded") {
      return {
        ...state,
        phase: "Succeeded",
        agent: verdict.result.agent,
        startTime: known?.startTime ?? now.toISOString(),
        completionTime: known?.completionTime ?? now.toISOString(),
        executionTime: round(verdict.result.executionTime),
      };
    }
    const going = known?.phase === "Running" || known?.phase === "WaitingForInput" || state.phase === "Running";
    if (running.includes(index) || verdict.state === "waiting" || going) {
      const startTime =
        state.startTime ?? known?.startTime ?? input.observed[state.name]?.run?.startTime ?? now.toISOString();
      return { ...state, phase, startTime, completionTime: now.toISOString(), message };
    }
    return state;
  });
}

export function finish(
  input: DecideInput,
  spec: CrewSpec | undefined,
  end: {
    phase: "Succeeded" | "Failed" | "Stopped";
    reason: string;
    message: string;
    tasks: TaskState[];
  },
  actions: Action[],
  startTime = input.now.toISOString(),
): Decision {
  const { execution, now } = input;
  const previous = execution.status ?? {};
  const nowIso = now.toISOString();
  const completed = end.tasks.filter((t) => t.phase === "Succeeded").length;
  const status: ExecutionStatus = {
    ...previous,
    phase: end.phase,
    ...(spec ? { crewSpec: spec } : {}),
    currentTask: undefined,
    progress: { completedTasks: completed, totalTasks: end.tasks.length },
    progressText: `${completed}/${end.tasks.length}`,
    tasks: end.tasks,
    startTime,
    completionTime: nowIso,
    executionTime: round(seconds(startTime, now)),
    error: end.phase === "Succeeded" ? undefined : end.message,
    observedGeneration: execution.generation,
    conditions: setCondition(
      previous.conditions,
      {
        type: "Succeeded",
        status: end.phase === "Succeeded" ? "True" : "False",
        reason: end.reason,
        message: end.message,
        observedGeneration: execution.generation,
      },
      nowIso,
    ),
  };
  delete status.currentTask;
  if (end.phase === "Succeeded") delete status.error;
  const events = spec ? transitionEvents(spec, previous, status) : [];
  events.push(executionEvent(end.phase, end.message));
  return { actions: inOrder([{ type: "setStatus", status }, ...actions, ...events]) };
}

/**
 * A finished execution may still see a run that has not ended (a stop raced a start): stop it. A run whose runner
 * already reported success is only exiting, and is left to end by itself.
 */
export function stopStrayRuns(input: DecideInput): Action[] {
  const spec = input.execution.status?.crewSpec;
  if (!spec) return [];
  const stray = (name: string) => {
    const run = input.observed[name]?.run;
    return run?.state === "running" && !successfulResult(input.observed[name], run.revision ?? 0);
  };
  const observedRunning = spec.tasks.flatMap((t, i) => (stray(t.name) ? [i] : []));
  const revisions = spec.tasks.map((t) => input.observed[t.name]?.run?.revision ?? 0);
  return observedRunning.map((index) => stopTask(spec, index, revisions));
}
