import type { CrewSpec } from "./crew.ts";
import type { Action, DecideInput, Decision } from "./decision.ts";
import { successfulResult, type ObservedTask } from "./observed-task.ts";
import type { ProjectAssignment } from "./task-assignment.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * A user's whole CrewAI project (`spec.runner.crew: module:Class`, the @CrewBase class `crewai create crew` writes) runs
 * as ONE run for the execution, with the crew's own process (sequential or hierarchical): CrewAI alone knows how to run
 * a hierarchical crew, and a project is run as it is. The run is started and stopped as task 0's run, under a name of
 * its own that no task's run can have (a Job `<execution>-p`, kube/task-names.ts: a restart finds it and never starts
 * a second, and the runner results policy lets its pod, and no other, write the results of every task of the
 * execution), and each task's result arrives as its own CrewTaskResult as CrewAI reports the task complete. decide()
 * sees the project through this view: the one run belongs to the first task that has not succeeded yet, so progress,
 * current_task, per-task timeouts, failures and stop read as for tasks run one by one.
 */

export function wholeProjectProblems(spec: {
  runtime: string;
  runner: { crew?: string | undefined };
  tasks: { name: string; humanInput?: boolean | undefined }[];
}): string[] {
  if (spec.runner.crew === undefined) return [];
  const problems =
    spec.runtime === "crewai"
      ? []
      : [
          `runner.crew names a CrewAI project (${spec.runner.crew}), which only the crewai runtime runs: set spec.runtime to crewai`,
        ];
  // A person's wait ends the task's run and a revision runs the task again on its own: a project runs whole, in one
  // run, so its tasks cannot wait (the adapter fails a project task that asks CrewAI for human input, project.py).
  for (const task of spec.tasks.filter((t) => t.humanInput)) {
    problems.push(
      `task "${task.name}" has humanInput, which a whole CrewAI project (runner.crew) cannot wait for: ` +
        "remove humanInput, or run the crew task by task (without runner.crew)",
    );
  }
  return problems;
}

const specOf = (input: DecideInput): CrewSpec | undefined => input.execution.status?.crewSpec ?? input.crew;

/**
 * decide() for a crew whose project runs whole: `decideTasks` (the per-task state machine) on the project's view of
 * the world, then its actions on the one run: only task 0 ever starts (with the project in its assignment, which names
 * its run the project's), and stopping any task stops task 0's run, the project's.
 */
export function decideWholeProject(input: DecideInput, decideTasks: (input: DecideInput) => Decision): Decision {
  const spec = specOf(input);
  const reference = spec?.runner.crew;
  if (!spec || reference === undefined) return decideTasks(input);
  const first = spec.tasks[0]!.name;
  const can = input.canStartTask;
  const decision = decideTasks({
    ...input,
    observed: projectView(spec, input.observed),
    // Later tasks are never started on their own: they run inside the project's run.
    canStartTask: (name) => name === first && (typeof can === "function" ? can(name) : can !== false),
  });
  const project: ProjectAssignment = {
    crew: reference,
    tasks: spec.tasks.map((t, index) => ({ name: t.name, index })),
  };
  const actions: Action[] = [];
  let stopping = false;
  for (const action of decision.actions) {
    if (action.type === "startTask") {
      actions.push({ ...action, assignment: { ...action.assignment, project } });
    } else if (action.type === "stopTask") {
      if (!stopping) actions.push({ type: "stopTask", index: 0, taskName: first });
      stopping = true;
    } else actions.push(action);
  }
  return { ...decision, actions };
}

/**
 * Every task with its own results (wherever they were observed), and the project's run (observed as task 0's) given
 * to the first task without a success. A later task's run has no start time of its own: it started when the task
 * before it ended, which the execution's status records when it is first seen running.
 */
export function projectView(spec: CrewSpec, observed: Record<string, ObservedTask>): Record<string, ObservedTask> {
  const run = observed[spec.tasks[0]!.name]?.run;
  const results = new Map<string, TaskResultSpec[]>();
  for (const task of Object.values(observed)) {
    for (const result of task.results) results.set(result.taskName, [...(results.get(result.taskName) ?? []), result]);
  }
  const view: Record<string, ObservedTask> = {};
  let open = false;
  for (const [index, task] of spec.tasks.entries()) {
    const own: ObservedTask = { results: results.get(task.name) ?? [] };
    if (run && !open && !successfulResult(own)) {
      open = true;
      if (index === 0) own.run = run;
      else {
        const { startTime: _started, ...later } = run;
        own.run = later;
      }
    }
    view[task.name] = own;
  }
  return view;
}
