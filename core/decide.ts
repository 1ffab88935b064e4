import { buildAssignment } from "./assignment.ts";
import { agentFor, type CrewSpec } from "./crew.ts";
import { setCondition } from "./conditions.ts";
import { dueWebhooks } from "./due-webhooks.ts";
import { EXECUTION_STOPPED_ERROR, isFinished, type ExecutionStatus, type TaskState } from "./execution.ts";
import { interpolate } from "./inputs.ts";
import { sameJson } from "./json.ts";
import { successfulResult, type ObservedTask } from "./observed-task.ts";
import type { Action, DecideInput, Decision } from "./decision.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * The whole state machine of a CrewExecution, as one pure function. The Kubernetes controller and the embedded
 * default both observe the world, call decide(), and carry out the actions; nothing here does I/O or reads a clock.
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

  const executionDeadline = Date.parse(startTime) + spec.runner.executionTimeoutSeconds * 1000;
  for (const [index, task] of spec.tasks.entries()) {
    const known = previous.tasks?.find((t) => t.name === task.name);
    const state = tasks[index]!;
    const verdict = judgeTask(spec, task.name, input.observed[task.name], known, now);
    if (verdict.state === "succeeded") {
      const taskStart = known?.startTime ?? input.observed[task.name]?.run?.startTime ?? nowIso;
      Object.assign(state, {
        phase: "Succeeded",
        agent: verdict.result.agent,
        startTime: taskStart,
        completionTime: known?.phase === "Succeeded" ? known.completionTime : nowIso,
        executionTime: round(verdict.result.executionTime),
      });
      continue;
    }
    // A run that failed by itself is reported as it is, even when a deadline has passed since.
    if (verdict.state === "failed") return failTask(input, spec, tasks, index, verdict, actions, startTime);

    const taskStart = verdict.state === "running" ? verdict.startTime : nowIso;
    const taskDeadline = Date.parse(taskStart) + spec.runner.taskTimeoutSeconds * 1000;
    if (now.getTime() >= Math.min(taskDeadline, executionDeadline)) {
      // Both deadlines may have passed while nobody looked (a controller down): the earlier one is the cause.
      if (taskDeadline <= executionDeadline) {
        actions.push({ type: "stopTask", index, taskName: task.name });
        state.startTime = taskStart;
        const failure = { state: "failed", reason: "TaskTimedOut", message: timedOut(task.name, spec) } as const;
        return failTask(input, spec, tasks, index, failure, actions, startTime);
      }
      const running = runningIndexes(input, spec);
      for (const i of running) actions.push({ type: "stopTask", index: i, taskName: spec.tasks[i]!.name });
      const message = `Execution timed out after ${spec.runner.executionTimeoutSeconds}s while running task "${task.name}"`;
      const marked = markDoneTasks(input, tasks, previous, now, running, "Failed", message);
      return finish(
        input,
        spec,
        { phase: "Failed", reason: "ExecutionTimedOut", message, tasks: marked },
        actions,
        startTime,
      );
    }

    // No slot to start the task: a new execution is left as it is (no Running status without its Job); a running
    // one records what finished, with this task Pending.
    const waits = verdict.state === "absent" && input.canStartTask === false;
    if (waits && previous.phase !== "Running") return { actions: [] };
    if (verdict.state === "absent" && !waits) {
      actions.push({ type: "startTask", index, taskName: task.name, assignment: buildAssignment(input, spec, index) });
    }
    if (!waits) Object.assign(state, { phase: "Running", startTime: taskStart });
    const completed = index;
    const status: ExecutionStatus = {
      ...previous,
      phase: "Running",
      crewSpec: spec,
      currentTask: task.name,
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
          message: `${waits ? "Waiting to start" : "Running"} task "${task.name}" (${completed + 1}/${spec.tasks.length})`,
          observedGeneration: execution.generation,
        },
        nowIso,
      ),
    };
    actions.push(...transitionEvents(spec, previous, status));
    if (!sameJson(status, previous)) actions.push({ type: "setStatus", status });
    const deadline = waits ? executionDeadline : Math.min(taskDeadline, executionDeadline);
    return { actions: inOrder(actions), requeueAfterSeconds: Math.max(0.1, round((deadline - now.getTime()) / 1000)) };
  }

  return finish(
    input,
    spec,
    { phase: "Succeeded", reason: "Succeeded", message: `All ${spec.tasks.length} tasks succeeded`, tasks },
    actions,
    startTime,
  );
}

/** The task at `index` failed: it and the execution end as Failed with the task's message. */
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
    if (running.includes(index) || known?.phase === "Running") {
      const startTime = known?.startTime ?? input.observed[state.name]?.run?.startTime ?? now.toISOString();
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

function executionEvent(phase: "Succeeded" | "Failed" | "Stopped", message: string): Action {
  if (phase === "Succeeded") return { type: "event", eventType: "Normal", reason: "ExecutionSucceeded", message };
  if (phase === "Stopped") return { type: "event", eventType: "Warning", reason: "ExecutionStopped", message };
  return { type: "event", eventType: "Warning", reason: "ExecutionFailed", message };
}

/** Events for every task whose phase changed since the last written status. */
function transitionEvents(spec: CrewSpec, previous: ExecutionStatus, next: ExecutionStatus): Action[] {
  const actions: Action[] = [];
  const total = spec.tasks.length;
  for (const [index, state] of (next.tasks ?? []).entries()) {
    const before = previous.tasks?.find((t) => t.name === state.name)?.phase ?? "Pending";
    if (before === state.phase) continue;
    const position = `${index + 1}/${total}`;
    if (state.phase === "Running") {
      actions.push({
        type: "event",
        eventType: "Normal",
        reason: "TaskStarted",
        message: `Task "${state.name}" (${position}) started`,
      });
    }
    if (state.phase === "Succeeded") {
      if (before === "Pending") {
        actions.push({
          type: "event",
          eventType: "Normal",
          reason: "TaskStarted",
          message: `Task "${state.name}" (${position}) started`,
        });
      }
      actions.push({
        type: "event",
        eventType: "Normal",
        reason: "TaskSucceeded",
        message: `Task "${state.name}" (${position}) succeeded in ${state.executionTime ?? 0}s`,
      });
    }
    if (state.phase === "Failed") {
      actions.push({
        type: "event",
        eventType: "Warning",
        reason: "TaskFailed",
        message: state.message ?? `Task "${state.name}" failed`,
      });
    }
  }
  return actions;
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
