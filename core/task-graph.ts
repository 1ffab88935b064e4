import type { CrewSpec } from "./crew.ts";

/**
 * The order in which a crew's tasks run and what each one is told, as CrewAI's sequential process has it (tasks[]
 * `asyncExecution` and `context`). decide() schedules by it; the runner's assignment takes its context from it.
 */

type Tasks = Pick<CrewSpec, "tasks">;

/**
 * For each task (by index), the indexes of the tasks that must have succeeded before it starts, in spec order:
 * - a synchronous task waits for the task before it and for every asynchronous task since the last synchronous one;
 * - an asynchronous task waits only for the last synchronous task before it, so consecutive asynchronous tasks start
 *   together;
 * - every task waits for its `context` tasks too (crewSpecProblems keeps them earlier, so this adds no wait CrewAI
 *   would not have: it makes the rule hold whatever the order says).
 */
export function taskDependencies(spec: Tasks): number[][] {
  const indexOf = new Map(spec.tasks.map((t, i) => [t.name, i]));
  let lastSync = -1;
  return spec.tasks.map((task, i) => {
    const deps = new Set<number>();
    if (task.asyncExecution) {
      if (lastSync >= 0) deps.add(lastSync);
    } else {
      for (let j = Math.max(lastSync, 0); j < i; j++) deps.add(j);
      lastSync = i;
    }
    for (const name of task.context ?? []) {
      const j = indexOf.get(name);
      if (j !== undefined && j < i) deps.add(j);
    }
    return [...deps].sort((a, b) => a - b);
  });
}

/**
 * The tasks whose outputs task `index` receives as context, in the order given: its `context` list when it has one
 * (an empty list: none); without one, a synchronous task gets every earlier task's output and an asynchronous task
 * none. The latter is what CrewAI 1.x does on a kickoff: it hands an asynchronous task without `context` only the
 * output of a synchronous task restored by a replay, which a kickoff never has.
 */
export function contextTaskNames(spec: Tasks, index: number): string[] {
  const task = spec.tasks[index];
  if (!task) return [];
  if (task.context) return task.context;
  if (task.asyncExecution) return [];
  return spec.tasks.slice(0, index).map((t) => t.name);
}
