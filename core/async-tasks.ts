/** The fields of a task that CrewAI's rules for asynchronous tasks read. */
interface AsyncTask {
  name: string;
  asyncExecution: boolean;
  context?: string[] | undefined;
}

/**
 * CrewAI's rules for asynchronous tasks: an asynchronous task cannot take context from an asynchronous task of its own
 * run of consecutive ones (they start together, so its output does not exist yet), and a crew ends with at most one.
 */
export function asyncTaskProblems(tasks: readonly AsyncTask[]): string[] {
  const problems: string[] = [];
  for (const [i, t] of tasks.entries()) {
    if (!t.asyncExecution) continue;
    // The asynchronous tasks that start together with t: back to the last synchronous task before it.
    const beside = new Set<string>();
    for (let j = i - 1; j >= 0 && tasks[j]!.asyncExecution; j--) beside.add(tasks[j]!.name);
    for (const c of new Set(t.context ?? [])) {
      if (beside.has(c)) {
        problems.push(
          `task "${t.name}" is asynchronous and takes context from "${c}", an asynchronous task that starts with it: make a task between them synchronous, or "${t.name}" synchronous`,
        );
      }
    }
  }
  const trailing = [];
  for (let j = tasks.length - 1; j >= 0 && tasks[j]!.asyncExecution; j--) trailing.unshift(tasks[j]!.name);
  if (trailing.length > 1) {
    problems.push(
      `the crew ends with ${trailing.length} asynchronous tasks (${trailing.map((n) => `"${n}"`).join(", ")}): at most one asynchronous task may come last`,
    );
  }
  return problems;
}
