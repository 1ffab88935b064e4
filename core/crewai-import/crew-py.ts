/**
 * The process a YAML project's `crew.py` gives its Crew, read as text (kubecrew runs no Python): the one
 * `process=Process.<name>` (or `process="<name>"`) it passes. Without one CrewAI runs its default, sequential;
 * anything else cannot be known without running the file, which the note says.
 */
export function processFromCrewPy(source: string): { process?: string; note?: string } {
  const assignments = [...source.matchAll(/\bprocess\s*=\s*([\w.]+(?:\([^)\n]*\))?|"[^"\n]*"|'[^'\n]*')/g)].map((m) =>
    m[1]!.trim(),
  );
  if (!assignments.length) return {};
  const named = assignments.map((a) => /^(?:Process\.|["'])(\w+)["']?$/.exec(a)?.[1]);
  const distinct = new Set(named);
  if (distinct.size === 1 && named[0]) return { process: named[0] };
  return {
    note: `sets the process as ${assignments.map((a) => `"process=${a}"`).join(", ")}, which cannot be read without running it: the crew runs sequential`,
  };
}

/**
 * The names of crew.py's methods with a decorator (`task`, `llm`), in the order they are written. @CrewBase runs a
 * YAML project's tasks in its `@task` methods' order (each builds the task of config/tasks.yaml with its name); an
 * agent's `llm` naming an `@llm` method is a model built in Python.
 */
export function decoratedMethodsOfCrewPy(source: string, decorator: "task" | "llm"): string[] {
  const pattern = new RegExp(`^[ \\t]*@${decorator}\\b[^\\n]*\\n(?:[ \\t]*@[^\\n]*\\n)*[ \\t]*def[ \\t]+(\\w+)`, "gm");
  return [...source.matchAll(pattern)].map((m) => m[1]!);
}
