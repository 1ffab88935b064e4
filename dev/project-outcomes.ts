import { readFile } from "node:fs/promises";
import { z } from "zod";
import { taskOutcome, type TaskAssignment, type TaskOutcome } from "../core/task-assignment.ts";
import type { TaskResultSpec } from "../core/task-result.ts";
import { watchRewrittenFile } from "./watch-rewritten-file.ts";

/**
 * A whole CrewAI project's run in the embedded default (core/whole-project.ts): the runner rewrites its outcomes file
 * (`kubecrew runner --outcomes`) as each task of the project ends; these are the results it holds, as the tasks'
 * CrewTaskResults would be in a cluster.
 */

const outcomeList = z.array(taskOutcome);

/** Reads the outcomes file every `everyMs` and hands each new version to `onChange`; returns the function that stops. */
export function watchProjectOutcomes(
  path: string,
  onChange: (outcomes: TaskOutcome[]) => void,
  everyMs = 200,
): () => void {
  return watchRewrittenFile(path, (text) => onChange(parseOutcomes(text)), everyMs);
}

/** The outcomes so far; none when the file is missing or unreadable. */
export async function readProjectOutcomes(path: string): Promise<TaskOutcome[]> {
  return parseOutcomes(await readFile(path, "utf8").catch(() => "[]"));
}

function parseOutcomes(text: string): TaskOutcome[] {
  const parsed = outcomeList.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : [];
}

/** One task's outcome as its result, with the attempt of the run that reported it. */
export function projectResult(assignment: TaskAssignment, attempt: number, outcome: TaskOutcome): TaskResultSpec {
  const failed = outcome.error !== undefined;
  return {
    executionRef: { name: assignment.execution.id },
    taskName: outcome.taskName,
    taskIndex: outcome.taskIndex,
    agent: outcome.agent,
    attempt,
    executionTime: outcome.executionTime,
    tokenUsage: outcome.tokenUsage,
    ...(outcome.model ? { model: outcome.model } : {}),
    ...(outcome.stepCount !== undefined
      ? { steps: outcome.steps ?? [], stepCount: outcome.stepCount, toolsUsed: outcome.toolsUsed ?? [] }
      : {}),
    ...(outcome.output !== undefined && !failed ? { output: outcome.output } : {}),
    ...(outcome.jsonDict !== undefined && !failed ? { jsonDict: outcome.jsonDict } : {}),
    ...(failed ? { error: outcome.error } : {}),
  };
}

/** The run's results: every task's outcome as reported, and the run's last outcome when it is none of them. */
export function projectResults(
  assignment: TaskAssignment,
  attempt: number,
  outcomes: TaskOutcome[],
  last: TaskOutcome | undefined,
): TaskResultSpec[] {
  const same = (a: TaskOutcome, b: TaskOutcome) =>
    a.taskIndex === b.taskIndex && (a.error === undefined) === (b.error === undefined);
  const all = last && !outcomes.some((o) => same(o, last)) ? [...outcomes, last] : outcomes;
  return all.map((o) => projectResult(assignment, attempt, o));
}

/** Results grouped by the task they are of. */
export function resultsByTask(results: TaskResultSpec[]): Record<string, TaskResultSpec[]> {
  const grouped: Record<string, TaskResultSpec[]> = {};
  for (const result of results) (grouped[result.taskName] ??= []).push(result);
  return grouped;
}
