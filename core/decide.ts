import { buildAssignment } from "./assignment.ts";
import { agentFor, type CrewSpec } from "./crew.ts";
import { setCondition } from "./conditions.ts";
import { dueWebhooks } from "./due-webhooks.ts";
import { EXECUTION_STOPPED_ERROR, isFinished, type ExecutionStatus, type TaskState } from "./execution.ts";
import { interpolate } from "./inputs.ts";
import { sameJson } from "./json.ts";
import { successfulResult, type ObservedTask } from "./observed-task.ts";
import { taskDependencies } from "./task-graph.ts";
import { executionEvent, transitionEvents } from "./transition-events.ts";
import type { Action, DecideInput, Decision } from "./decision.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * The whole state machine of a CrewExecution, as one pure function. The Kubernetes controller and the embedded
 * default both observe the world, call decide(), and carry out the actions; nothing here does I/O or reads a clock.
 * Tasks form a DAG (task-graph.ts): every task whose dependencies have succeeded starts, so asynchronous tasks run
 * side by side; the first failure (or timeout) ends the execution and stops whatever runs beside it.
 */

const seconds = (from: string, to: Date) => Math.max(0, (to.getTime() - Date.parse(from)) / 1000);
const round = (n: number) => Math.round(n * 1000) / 1000;

function lastFailure(task: ObservedTask | undefined): TaskResultSpec | undefined {
  return task?.results
    .filter((r) => r.error !== undefined)
    .sort((a, b) => a.attempt - b.attempt)
    .at(-1);
}

type TaskVerdict =
  | { state: "succeeded"; result: TaskResultSpec }
  | { state: "failed"; message: string; reason: "TaskFailed" | "TaskTimedOut" }
  | { state: "running"; startTime: string }
  | { state: "absent" };

function judgeTask(
  spec: CrewSpec,
  name: string,
  task: ObservedTask | undefined,
  known: TaskState | undefined,
  now: Date,
): TaskVerdict {
  const success = successfulResult(task);
  if (success) return { state: "succeeded", result: success };
  const run = task?.run;
  if (run?.state === "failed") {
    if (run.reason === "DeadlineExceeded") {
      return { state: "failed", reason: "TaskTimedOut", message: timedOut(name, spec) };
    }
    const why = lastFailure(task)?.error ?? run.message ?? "its run failed without a message";
    return { state: "failed", reason: "TaskFailed", message: `Task "${name}" failed: ${why}` };
  }
  // A run that ended well but whose result is not visible yet (a cache lagging) counts as running, deadline and all.
  if (run) return { state: "running", startTime: known?.startTime ?? run.startTime ?? now.toISOString() };
  // The status records the start, so the run was created (see Decision): a cache that does not show it yet lags.
  if (known?.phase === "Running" && known.startTime) return { state: "running", startTime: known.startTime };
  return { state: "absent" };
}

const timedOut = (name: string, spec: CrewSpec) => `Task "${name}" timed out after ${spec.runner.taskTimeoutSeconds}s`;

export function decide(input: DecideInput): Decision {
  const progress = decideProgress(input);
  const written = progress.actions.find((a) => a.type === "setStatus")?.status ?? input.execution.status;
  return { ...progress, actions: inOrder([...progress.actions, ...dueWebhooks(input, written)]) };
}

/** Every action but the webhooks, which follow from the status this decides (see due-webhooks.ts). */
function decideProgress(input: DecideInput): Decision {
  const { execution, now } = input;
  const previous = execution.status ?? {};
  const nowIso = now.toISOString();
  if (isFinished(previous.phase)) return { actions: stopStrayRuns(input) };

  const spec = previous.crewSpec ?? input.crew;
  if (!spec) {
    const message = `Crew "${execution.spec.crewRef.name}" not found`;
    return finish(input, undefined, { phase: "Failed", reason: "CrewNotFound", message, tasks: [] }, []);
  }

  const actions: Action[] = [];
  const startTime = previous.startTime ?? nowIso;
  // The agent as CrewAI reports it: its role, with the execution's inputs filled in.
  const tasks: TaskState[] = spec.tasks.map((t) => ({
    name: t.name,
    agent: interpolate(agentFor(spec, t.name).role, execution.spec.inputs),
    phase: "Pending",
  }));

  if (execution.spec.stop) {
    const running = runningIndexes(input, spec);
    for (const index of running) actions.push({ type: "stopTask", index, taskName: spec.tasks[index]!.name });
    const message = EXECUTION_STOPPED_ERROR;
    const marked = markDoneTasks(input, tasks, previous, now, running, "Stopped", message);
    return finish(input, spec, { phase: "Stopped", reason: "Stopped", message, tasks: marked }, actions, startTime);
  }

  const verdicts = spec.tasks.map((task) =>
    judgeTask(spec, task.name, input.observed[task.name], knownTask(previous, task.name), now),
  );
  for (const [index, verdict] of verdicts.entries()) {
    const state = tasks[index]!;
    if (verdict.state === "succeeded") {
      const known = knownTask(previous, state.name);
      Object.assign(state, {
        phase: "Succeeded",
        agent: verdict.result.agent,
        startTime: known?.startTime ?? input.observed[state.name]?.run?.startTime ?? nowIso,
        completionTime: known?.phase === "Succeeded" ? known.completionTime : nowIso,
        executionTime: round(verdict.result.executionTime),
      });
    }
    if (verdict.state === "running") Object.assign(state, { phase: "Running", startTime: verdict.startTime });
  }

  // A run that failed by itself is reported as it is, even when a deadline has passed since; the first in spec order.
  const failed = verdicts.findIndex((v) => v.state === "failed");
  const failure = verdicts[failed];
  if (failure?.state === "failed") return failTask(input, spec, tasks, failed, failure, actions, startTime);

  if (verdicts.every((v) => v.state === "succeeded")) {
    return finish(
      input,
      spec,
      { phase: "Succeeded", reason: "Succeeded", message: `All ${spec.tasks.length} tasks succeeded`, tasks },
      actions,
      startTime,
    );
  }

  const executionDeadline = Date.parse(startTime) + spec.runner.executionTimeoutSeconds * 1000;
  const taskDeadline = (index: number) =>
    Date.parse(tasks[index]!.startTime ?? nowIso) + spec.runner.taskTimeoutSeconds * 1000;
  const running = indexesWhere(verdicts, (v) => v.state === "running");
  // Deadlines may have passed while nobody looked (a controller down): the one that passed first is the cause.
  const firstDue = running.reduce<number | undefined>(
    (first, i) => (first === undefined || taskDeadline(i) < taskDeadline(first) ? i : first),
    undefined,
  );
  if (
    firstDue !== undefined &&
    now.getTime() >= taskDeadline(firstDue) &&
    taskDeadline(firstDue) <= executionDeadline
  ) {
    actions.push({ type: "stopTask", index: firstDue, taskName: spec.tasks[firstDue]!.name });
    const timeout = { reason: "TaskTimedOut", message: timedOut(spec.tasks[firstDue]!.name, spec) } as const;
    return failTask(input, spec, tasks, firstDue, timeout, actions, startTime);
  }

  // A task starts once every task it depends on (task-graph.ts) has succeeded.
  const dependencies = taskDependencies(spec);
  const ready = indexesWhere(
    verdicts,
    (v, i) => v.state === "absent" && dependencies[i]!.every((j) => verdicts[j]!.state === "succeeded"),
  );

  if (now.getTime() >= executionDeadline) {
    const stopping = runningIndexes(input, spec);
    for (const i of stopping) actions.push({ type: "stopTask", index: i, taskName: spec.tasks[i]!.name });
    const busy = running.length > 0 ? running : ready;
    const message = `Execution timed out after ${spec.runner.executionTimeoutSeconds}s while running ${taskList(spec, busy)}`;
    const marked = markDoneTasks(input, tasks, previous, now, stopping, "Failed", message);
    return finish(
      input,
      spec,
      { phase: "Failed", reason: "ExecutionTimedOut", message, tasks: marked },
      actions,
      startTime,
    );
  }

  // Tasks without a slot to start wait as Pending: a new execution none of whose tasks may start is left as it is
  // (no Running status without a run); a running one records what finished.
  const mayStart = (i: number) => {
    const can = input.canStartTask;
    return typeof can === "function" ? can(spec.tasks[i]!.name) : can !== false;
  };
  const starting = ready.filter(mayStart);
  const waiting = ready.filter((i) => !mayStart(i));
  if (starting.length === 0 && running.length === 0 && previous.phase !== "Running") return { actions: [] };
  for (const index of starting) {
    actions.push({
      type: "startTask",
      index,
      taskName: spec.tasks[index]!.name,
      assignment: buildAssignment(input, spec, index),
    });
    Object.assign(tasks[index]!, { phase: "Running", startTime: nowIso });
  }

  const active = [...running, ...starting].sort((a, b) => a - b);
  const completed = verdicts.filter((v) => v.state === "succeeded").length;
  const status: ExecutionStatus = {
    ...previous,
    phase: "Running",
    crewSpec: spec,
    currentTask: spec.tasks[active[0] ?? waiting[0]!]!.name,
    progress: { completedTasks: completed, totalTasks: spec.tasks.length },
    progressText: `${completed}/${spec.tasks.length}`,
    tasks,
    startTime,
    observedGeneration: execution.generation,
    conditions: setCondition(
      previous.conditions,
      {
        type: "Succeeded",
        status: "Unknown",
        reason: "Running",
        message: runningMessage(spec, active, waiting, completed),
        observedGeneration: execution.generation,
      },
      nowIso,
    ),
  };
  actions.push(...transitionEvents(spec, previous, status));
  if (!sameJson(status, previous)) actions.push({ type: "setStatus", status });
  const deadline = Math.min(executionDeadline, ...active.map(taskDeadline));
  return { actions: inOrder(actions), requeueAfterSeconds: Math.max(0.1, round((deadline - now.getTime()) / 1000)) };
}

const knownTask = (status: ExecutionStatus, name: string) => status.tasks?.find((t) => t.name === name);

function indexesWhere<T>(items: T[], test: (item: T, index: number) => boolean): number[] {
  return items.flatMap((item, i) => (test(item, i) ? [i] : []));
}

/** `task "a"`, or `tasks "a", "b"`. */
function taskList(spec: CrewSpec, indexes: number[]): string {
  const names = indexes.map((i) => `"${spec.tasks[i]!.name}"`).join(", ");
  return indexes.length === 1 ? `task ${names}` : `tasks ${names}`;
}

/** The Running condition's message: the task running (or waiting for a slot) and its place, or the tasks running. */
function runningMessage(spec: CrewSpec, active: number[], waiting: number[], completed: number): string {
  const total = spec.tasks.length;
  if (active.length === 0) return `Waiting to start ${taskList(spec, waiting.slice(0, 1))} (${completed + 1}/${total})`;
  if (active.length === 1) return `Running ${taskList(spec, active)} (${completed + 1}/${total})`;
  return `Running ${taskList(spec, active)} (${completed}/${total} completed)`;
}

/**
 * The task at `index` failed: it and the execution end as Failed with the task's message, and the tasks running
 * beside it are stopped (CrewAI fails the kickoff with an asynchronous task's error too).
 */
function failTask(
  input: DecideInput,
  spec: CrewSpec,
  tasks: TaskState[],
  index: number,
  failure: { message: string; reason: "TaskFailed" | "TaskTimedOut" },
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
  for (const i of beside) actions.push({ type: "stopTask", index: i, taskName: spec.tasks[i]!.name });
  for (const [i, state] of tasks.entries()) {
    if (i === index || !(state.phase === "Running" || beside.includes(i))) continue;
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
function inOrder(actions: Action[]): Action[] {
  return [...actions].sort((a, b) => actionOrder[a.type] - actionOrder[b.type]);
}

/** Tasks whose run may still be going: observed running, or recorded as running (its run not visible yet). */
function runningIndexes(input: DecideInput, spec: CrewSpec): number[] {
  const recorded = input.execution.status?.tasks ?? [];
  return spec.tasks.flatMap((t, i) => {
    if (successfulResult(input.observed[t.name])) return [];
    const run = input.observed[t.name]?.run;
    if (run?.state === "running") return [i];
    if (!run && recorded.find((r) => r.name === t.name)?.phase === "Running") return [i];
    return [];
  });
}

/** After a stop or an execution timeout: succeeded tasks stay succeeded, running ones take the final phase. */
function markDoneTasks(
  input: DecideInput,
  tasks: TaskState[],
  previous: ExecutionStatus,
  now: Date,
  running: number[],
  phase: "Stopped" | "Failed",
  message: string,
): TaskState[] {
  return tasks.map((state, index) => {
    const known = previous.tasks?.find((t) => t.name === state.name);
    const result = successfulResult(input.observed[state.name]);
    if (result) {
      return {
        ...state,
        phase: "Succeeded",
        agent: result.agent,
        startTime: known?.startTime ?? now.toISOString(),
        completionTime: known?.completionTime ?? now.toISOString(),
        executionTime: round(result.executionTime),
      };
    }
    if (running.includes(index) || known?.phase === "Running" || state.phase === "Running") {
      const startTime =
        state.startTime ?? known?.startTime ?? input.observed[state.name]?.run?.startTime ?? now.toISOString();
      return { ...state, phase, startTime, completionTime: now.toISOString(), message };
    }
    return state;
  });
}

function finish(
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
function stopStrayRuns(input: DecideInput): Action[] {
  const spec = input.execution.status?.crewSpec;
  if (!spec) return [];
  const stray = (name: string) =>
    input.observed[name]?.run?.state === "running" && !successfulResult(input.observed[name]);
  const observedRunning = spec.tasks.flatMap((t, i) => (stray(t.name) ? [i] : []));
  return observedRunning.map((index) => ({ type: "stopTask", index, taskName: spec.tasks[index]!.name }));
}
