import { buildAssignment } from "./assignment.ts";
import type { CrewSpec } from "./crew.ts";
import { agentFor } from "./crew-process.ts";
import { setCondition } from "./conditions.ts";
import { dueWebhooks } from "./due-webhooks.ts";
import { EXECUTION_STOPPED_ERROR, isFinished, type ExecutionStatus, type TaskState } from "./execution.ts";
import { failTask, finish, inOrder, markDoneTasks, round, stopStrayRuns, stopTask } from "./execution-end.ts";
import { requestFor, taskRevision, waitedMs } from "./human-input.ts";
import type { InputRequest } from "./human-input-schema.ts";
import { interpolate } from "./inputs.ts";
import { sameJson } from "./json.ts";
import { taskDependencies } from "./task-graph.ts";
import { judgeTask, knownTask, runningIndexes, timedOut, unanswered, type TaskVerdict } from "./task-verdict.ts";
import { heldCallRequests, undecidedHeldTools } from "./tool-call-requests.ts";
import { transitionEvents } from "./transition-events.ts";
import { decideWholeProject } from "./whole-project.ts";
import type { Action, DecideInput, Decision } from "./decision.ts";

/**
 * The whole state machine of a CrewExecution, as one pure function. The Kubernetes controller and the embedded
 * default both observe the world, call decide(), and carry out the actions; nothing here does I/O or reads a clock.
 * Tasks form a DAG (task-graph.ts): every task whose dependencies have succeeded starts, so asynchronous tasks run
 * side by side; the first failure (or timeout) ends the execution and stops whatever runs beside it. A `humanInput`
 * task's answer waits for a person (WaitingForInput, no run held) until spec.decisions approves it — then it has
 * succeeded — or sends it back: then the task runs again as its next revision (human-input.ts).
 */

export function decide(input: DecideInput): Decision {
  // A crew whose CrewAI project runs whole (spec.runner.crew) is one run for the execution (whole-project.ts).
  return decideWholeProject(input, decideTasks);
}

function decideTasks(input: DecideInput): Decision {
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
  const revisions = spec.tasks.map((t) => taskRevision(execution, t.name));
  // The agent as CrewAI reports it: its role, with the execution's inputs filled in.
  const tasks: TaskState[] = spec.tasks.map((t, i) => ({
    name: t.name,
    agent: interpolate(agentFor(spec, t.name).role, execution.spec.inputs),
    phase: "Pending",
    ...(revisions[i] ? { revision: revisions[i] } : {}),
  }));
  const verdicts = spec.tasks.map((task) => judgeTask(spec, task, execution, input.observed[task.name], now));

  if (execution.spec.stop) {
    const running = runningIndexes(input, spec);
    for (const index of running) actions.push(stopTask(spec, index, revisions));
    const message = EXECUTION_STOPPED_ERROR;
    const marked = markDoneTasks(input, tasks, verdicts, running, "Stopped", message);
    return finish(input, spec, { phase: "Stopped", reason: "Stopped", message, tasks: marked }, actions, startTime);
  }

  for (const [index, verdict] of verdicts.entries()) {
    const state = tasks[index]!;
    const known = knownTask(previous, state.name);
    if (verdict.state === "succeeded") {
      Object.assign(state, {
        phase: "Succeeded",
        agent: verdict.result.agent,
        startTime: known?.startTime ?? input.observed[state.name]?.run?.startTime ?? nowIso,
        completionTime: known?.phase === "Succeeded" ? known.completionTime : nowIso,
        executionTime: round(verdict.result.executionTime),
      });
    }
    if (verdict.state === "waiting") {
      Object.assign(state, {
        phase: "WaitingForInput",
        agent: verdict.result.agent,
        startTime: known?.startTime ?? input.observed[state.name]?.run?.startTime ?? nowIso,
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

  // Time spent waiting for people does not count against the execution's deadline (human-input.ts).
  const executionDeadline =
    Date.parse(startTime) + spec.runner.executionTimeoutSeconds * 1000 + waitedMs(execution.spec, previous, now);
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
    actions.push(stopTask(spec, firstDue, revisions));
    const timeout = { reason: "TaskTimedOut", message: timedOut(spec.tasks[firstDue]!.name, spec) } as const;
    return failTask(input, spec, tasks, firstDue, timeout, actions, startTime);
  }

  // A forgotten wait ends the execution (runner.humanInputTimeoutSeconds).
  const waiting = indexesWhere(verdicts, (v) => v.state === "waiting");
  const answerDeadline = (i: number) => {
    const verdict = verdicts[i]!;
    const since = verdict.state === "waiting" ? Date.parse(verdict.requestedAt) : now.getTime();
    return since + spec.runner.humanInputTimeoutSeconds * 1000;
  };
  const forgotten = waiting.find((i) => now.getTime() >= answerDeadline(i));
  if (forgotten !== undefined) {
    const name = spec.tasks[forgotten]!.name;
    const verdict = verdicts[forgotten]!;
    const revision = taskRevision(input.execution, name);
    // A run parked on held calls names the calls nobody decided on.
    const heldTools =
      verdict.state === "waiting" && verdict.held ? undecidedHeldTools(input.execution, name, revision) : [];
    const timeout = { reason: "HumanInputTimedOut", message: unanswered(name, spec, heldTools) } as const;
    return failTask(input, spec, tasks, forgotten, timeout, actions, startTime);
  }

  // A task starts once every task it depends on (task-graph.ts) has succeeded.
  const dependencies = taskDependencies(spec);
  const ready = indexesWhere(
    verdicts,
    (v, i) => v.state === "absent" && dependencies[i]!.every((j) => verdicts[j]!.state === "succeeded"),
  );

  if (now.getTime() >= executionDeadline) {
    const stopping = runningIndexes(input, spec);
    for (const i of stopping) actions.push(stopTask(spec, i, revisions));
    const busy = running.length > 0 ? running : ready;
    const message = `Execution timed out after ${spec.runner.executionTimeoutSeconds}s while running ${taskList(spec, busy)}`;
    const marked = markDoneTasks(input, tasks, verdicts, stopping, "Failed", message);
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
  const waitingForSlot = ready.filter((i) => !mayStart(i));
  const begun = previous.phase === "Running" || previous.phase === "WaitingForInput";
  if (starting.length === 0 && running.length === 0 && waiting.length === 0 && !begun) return { actions: [] };
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
    phase: waiting.length > 0 ? "WaitingForInput" : "Running",
    crewSpec: spec,
    currentTask: spec.tasks[active[0] ?? waiting[0] ?? waitingForSlot[0]!]!.name,
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
        reason: waiting.length > 0 ? "WaitingForInput" : "Running",
        message: runningMessage(spec, active, waiting, waitingForSlot, completed),
        observedGeneration: execution.generation,
      },
      nowIso,
    ),
  };
  const requests = newRequests(input, spec, revisions, waiting, verdicts, nowIso);
  if (requests.length > 0) status.inputRequests = [...(previous.inputRequests ?? []), ...requests];
  actions.push(...transitionEvents(spec, previous, status));
  if (!sameJson(status, previous)) actions.push({ type: "setStatus", status });
  // While a person is asked, the execution's deadline moves on with the clock: it is no reason to look again.
  const deadlines = [...active.map(taskDeadline), ...waiting.map(answerDeadline)];
  const deadline = Math.min(...deadlines, ...(waiting.length > 0 ? [] : [executionDeadline]));
  return { actions: inOrder(actions), requeueAfterSeconds: Math.max(0.1, round((deadline - now.getTime()) / 1000)) };
}

/** The requests for the answers that now wait for a person and were not asked for before. */
function newRequests(
  input: DecideInput,
  spec: CrewSpec,
  revisions: number[],
  waiting: number[],
  verdicts: TaskVerdict[],
  nowIso: string,
): InputRequest[] {
  const previous = input.execution.status;
  return waiting.flatMap((i) => {
    const task = spec.tasks[i]!.name;
    const verdict = verdicts[i]!;
    if (verdict.state === "waiting" && verdict.held) {
      return heldCallRequests(verdict.result, task, revisions[i]!, input.execution, nowIso);
    }
    if (requestFor(previous, task, revisions[i]!)) return [];
    return [{ kind: "taskOutput", task, revision: revisions[i]!, requestedAt: nowIso }];
  });
}

function indexesWhere<T>(items: T[], test: (item: T, index: number) => boolean): number[] {
  return items.flatMap((item, i) => (test(item, i) ? [i] : []));
}

/** `task "a"`, or `tasks "a", "b"`. */
function taskList(spec: CrewSpec, indexes: number[]): string {
  const names = indexes.map((i) => `"${spec.tasks[i]!.name}"`).join(", ");
  return indexes.length === 1 ? `task ${names}` : `tasks ${names}`;
}

/**
 * The condition's message while the execution goes on: the task waiting for a person, running (or waiting for a slot)
 * and its place, or the tasks running.
 */
function runningMessage(
  spec: CrewSpec,
  active: number[],
  waiting: number[],
  waitingForSlot: number[],
  completed: number,
): string {
  const total = spec.tasks.length;
  if (waiting.length > 0) {
    const place = `(${completed + 1}/${total})`;
    const beside = active.length > 0 ? `; running ${taskList(spec, active)}` : "";
    return `Waiting for human input on ${taskList(spec, waiting)} ${place}${beside}`;
  }
  if (active.length === 0) {
    return `Waiting to start ${taskList(spec, waitingForSlot.slice(0, 1))} (${completed + 1}/${total})`;
  }
  if (active.length === 1) return `Running ${taskList(spec, active)} (${completed + 1}/${total})`;
  return `Running ${taskList(spec, active)} (${completed}/${total} completed)`;
}
