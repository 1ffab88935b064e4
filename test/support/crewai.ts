import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const repoRoot = resolve(import.meta.dirname, "../..");

/**
 * The Python of the crewai runtime's virtual environment (hack/crewai-venv.sh, which npm test's set-up runs): the real
 * CrewAI package, never a stand-in.
 */
export function crewaiPython(): string {
  const python = execFileSync("bash", [join(repoRoot, "hack/crewai-venv.sh"), "python"], { encoding: "utf8" }).trim();
  if (!existsSync(python)) {
    throw new Error(`${python} does not exist: run hack/crewai-venv.sh ensure (npm test's set-up does)`);
  }
  return python;
}

/** CrewAI's prompt texts, read from the installed package (crewai/translations/en.json). */
export function crewaiPrompts(python: string): Record<string, Record<string, string>> {
  const init = execFileSync(python, ["-c", "import importlib.util; print(importlib.util.find_spec('crewai').origin)"], {
    encoding: "utf8",
  }).trim();
  return JSON.parse(readFileSync(join(dirname(init), "translations", "en.json"), "utf8")) as Record<
    string,
    Record<string, string>
  >;
}

/** A CrewAI prompt template filled in: `{name}` replaced by `values[name]`. */
export function fillPrompt(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}
