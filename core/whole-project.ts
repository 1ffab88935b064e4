import type { CrewSpec } from "./crew.ts";
import type { Action, DecideInput, Decision } from "./decision.ts";
import { successfulResult, type ObservedTask } from "./observed-task.ts";
import type { JsonObject } from "./json.ts";
import { interpolate } from "./inputs.ts";
import type { DeclaredCrew, ProjectAssignment, TaskAssignment } from "./task-assignment.ts";
import { resolveTaskTools } from "./task-tools.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * A user's whole CrewAI project (`spec.runner.crew: module:Class`, the @CrewBase class `crewai create crew` writes) runs
 * as ONE run for the execution, with the crew's own process (sequential or hierarchical): CrewAI alone knows how to run
 * a hierarchical crew, and a project is run as it is. The run is started and stopped as task 0's run, under a name of
 * its own that no task's run can have (a Job `<execution>-p`, kube/task-names.ts: a restart finds it and never starts
 * a second, and the runner results policy lets its pod, and no other, write the results of every task of the
 * execution), and each task's result arrives as its own CrewTaskResult as CrewAI reports the task complete. decide()
 * sees the project through this view: the one run belongs to the first task that has not succeeded yet, so progress,
 * current_task, per-task timeouts, failures and stop read as for tasks run one by one. A crewai crew declared in the
 * Crew runs the same way when CrewAI can only run its process whole (declaredWhole): the adapter builds its Crew from
 * the spec.
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

type WholeFields = Pick<CrewSpec, "runtime" | "runner" | "process" | "agents">;

/**
 * A crewai crew declared in the Crew whose process CrewAI runs only as a whole: hierarchical (its manager hands each
 * task's work to the agents as it goes), or with agents that delegate (allowDelegation: their coworkers must be in the
 * same Crew). It runs as a project does, its Crew built by the adapter from the spec.
 */
export function declaredWhole(spec: WholeFields): boolean {
  if (spec.runtime !== "crewai" || spec.runner.crew !== undefined) return false;
  return spec.process === "hierarchical" || spec.agents.some((a) => a.allowDelegation === true);
}

/** Whether the crew runs as ONE run for the execution: a CrewAI project (runner.crew), or a declaredWhole crew. */
export function runsWhole(spec: WholeFields): boolean {
  return spec.runner.crew !== undefined || declaredWhole(spec);
}

/**
 * What the crewai runtime cannot give a declared crew it runs whole, one line each: never left out in silence. A task
 * cannot wait for a person (the run holds every task's work in one pod: one task cannot be parked and run again on its
 * own), and a hierarchical crew's task without an agent cannot have `tools`: they name tools of the task's agent
 * (CrewAI gives a task's tools to the manager, beside its delegation to that agent).
 */
export function declaredWholeProblems(spec: CrewSpec): string[] {
  if (!declaredWhole(spec)) return [];
  const whole = "a crew the crewai runtime runs whole (process hierarchical or allowDelegation)";
  const problems: string[] = [];
  for (const t of spec.tasks) {
    if (t.tools !== undefined && t.agent === undefined) {
      problems.push(
        `task "${t.name}" has tools but no agent, in ${whole}: a task's tools are tools of its agent's; ` +
          "name the agent (tasks[].agent) or remove tools",
      );
    }
    if (t.humanInput) {
      problems.push(
        `task "${t.name}" has humanInput, which ${whole} cannot wait for: its one run holds every task's work; ` +
          "use runtime kubecrew, or remove humanInput",
      );
    }
  }
  return problems;
}

/** The crew as the adapter builds it in CrewAI: its process, its manager, its tasks with the inputs filled in. */
export function declaredCrewOf(spec: CrewSpec, inputs: JsonObject): DeclaredCrew {
  return {
    process: spec.process,
    ...(spec.process === "hierarchical" ? { manager: spec.managerAgent ? "agent" : "llm" } : {}),
    tasks: spec.tasks.map((t) => ({
      name: t.name,
      description: interpolate(t.description, inputs),
      expectedOutput: interpolate(t.expectedOutput, inputs),
      ...(t.agent !== undefined ? { agent: t.agent } : {}),
      ...(t.context !== undefined ? { context: t.context } : {}),
      ...(t.asyncExecution ? { asyncExecution: true } : {}),
      ...(t.tools !== undefined ? { tools: t.tools } : {}),
      ...(t.outputJson !== undefined ? { outputJson: t.outputJson } : {}),
      ...(t.guardrail !== undefined ? { guardrail: t.guardrail } : {}),
      ...(t.guardrails !== undefined ? { guardrails: t.guardrails } : {}),
      ...(t.guardrailMaxRetries !== undefined ? { guardrailMaxRetries: t.guardrailMaxRetries } : {}),
      ...(t.python !== undefined ? { python: t.python } : {}),
    })),
  };
}

/** Every agent of a declared crew, inputs filled in, with its model and tools: the Crew's agents, in the one pod. */
function crewAgents(spec: CrewSpec, inputs: JsonObject): NonNullable<TaskAssignment["coworkers"]> {
  const first = spec.tasks[0]!;
  return spec.agents.map((a) => ({
    agent: {
      ...a,
      llm: a.llm ?? spec.llm,
      role: interpolate(a.role, inputs),
      goal: interpolate(a.goal, inputs),
      backstory: interpolate(a.backstory, inputs),
    },
    tools: resolveTaskTools(spec, a, { ...first, tools: undefined }),
  }));
}

/**
 * decide() for a crew whose project runs whole: `decideTasks` (the per-task state machine) on the project's view of
 * the world, then its actions on the one run: only task 0 ever starts (with the project in its assignment, which names
 * its run the project's), and stopping any task stops task 0's run, the project's.
 */
export function decideWholeProject(input: DecideInput, decideTasks: (input: DecideInput) => Decision): Decision {
  const spec = specOf(input);
  if (!spec || !runsWhole(spec)) return decideTasks(input);
  const reference = spec.runner.crew;
  const inputs = input.execution.spec.inputs;
  const first = spec.tasks[0]!.name;
  const can = input.canStartTask;
  const decision = decideTasks({
    ...input,
    observed: projectView(spec, input.observed),
    // Later tasks are never started on their own: they run inside the project's run.
    canStartTask: (name) => name === first && (typeof can === "function" ? can(name) : can !== false),
  });
  const project: ProjectAssignment = {
    ...(reference !== undefined ? { crew: reference } : { declared: declaredCrewOf(spec, inputs) }),
    tasks: spec.tasks.map((t, index) => ({ name: t.name, index })),
  };
  // A declared crew's agents are all in the pod (their keys mounted as coworkers' are, controller/task-job.ts).
  const agents = reference === undefined ? { coworkers: crewAgents(spec, inputs) } : {};
  const actions: Action[] = [];
  let stopping = false;
  for (const action of decision.actions) {
    if (action.type === "startTask") {
      actions.push({ ...action, assignment: { ...action.assignment, ...agents, project } });
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
