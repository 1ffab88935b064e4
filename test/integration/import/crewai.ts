import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";

/**
 * CrewAI as the oracle of the import tests: the pinned PyPI packages (crewai, crewai-cli) in the virtual environment
 * hack/crewai-venv.sh makes (npm test's set-up runs `ensure`), or the Python KUBECREW_CREWAI_PYTHON names.
 */

const run = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, "../../..");

/** CrewAI's telemetry and tracing off: the tests make no call but to loopback. */
export const crewaiEnv = {
  ...process.env,
  CREWAI_DISABLE_TELEMETRY: "true",
  CREWAI_TRACING_ENABLED: "false",
  OTEL_SDK_DISABLED: "true",
};

let python: Promise<string> | undefined;

/** The Python of the CrewAI virtual environment; a missing one fails the test with what to run. */
export function crewaiPython(): Promise<string> {
  python ??= (async () => {
    const named = process.env.KUBECREW_CREWAI_PYTHON;
    const path = named || (await run("bash", [join(repoRoot, "hack/crewai-venv.sh"), "python"])).stdout.trim();
    if (!existsSync(path)) {
      throw new Error(`${path} does not exist: make CrewAI's virtual environment with bash hack/crewai-venv.sh ensure`);
    }
    return path;
  })();
  return python;
}

/** `crewai create crew NAME …` from the pinned crewai-cli, in a new temporary folder; the project's folder. */
export async function createCrewAIProject(
  name: string,
  shape: "classic" | "json",
): Promise<{ parent: string; project: string }> {
  const parent = await mkdtemp(join(tmpdir(), "kubecrew-crewai-cli-"));
  const crewai = join(dirname(await crewaiPython()), "crewai");
  const args = ["create", "crew", name, "--skip-provider", ...(shape === "classic" ? ["--classic"] : [])];
  // CREWAI_DMN: the CLI's own non-interactive mode, which writes its JSON-first template without asking.
  const env = { ...crewaiEnv, ...(shape === "json" ? { CREWAI_DMN: "1" } : {}) };
  await run(crewai, args, { cwd: parent, env, timeout: 120_000 });
  return { parent, project: join(parent, name) };
}

/** What CrewAI's verdict script (crewai_verdicts.py) answers for one case. */
export interface CrewAIVerdict {
  id: string;
  accepted: boolean;
  errors: string[];
  crew: CrewAISummary | null;
  jsonc?: Record<string, unknown>;
  fields?: { agent: string[]; task: string[]; crew: string[]; max_iter: number };
}

export interface CrewAISummary {
  process: string;
  inputs: Record<string, unknown>;
  agents: {
    role: string;
    goal: string;
    backstory: string;
    max_iter: number;
    llm: { model: string; provider: string; base_url: string | null; temperature: number | null } | null;
    apps: string[] | null;
    mcps: (string | { url: string; streamable: boolean })[];
  }[];
  tasks: {
    name: string | null;
    description: string;
    expected_output: string;
    agent: string | null;
    context: string[] | null;
    async_execution: boolean;
  }[];
}

export interface VerdictCase {
  id: string;
  kind: "json-project" | "inline" | "yaml-project" | "crewbase" | "model-fields";
  path?: string;
  build?: boolean;
  module?: string;
}

/** CrewAI's verdicts on every case, from one Python process (importing CrewAI once takes seconds). */
export async function crewaiVerdicts(cases: VerdictCase[]): Promise<Map<string, CrewAIVerdict>> {
  const dir = await mkdtemp(join(tmpdir(), "kubecrew-verdicts-"));
  await writeFile(join(dir, "cases.json"), JSON.stringify(cases));
  const script = join(import.meta.dirname, "crewai_verdicts.py");
  const { stdout } = await run(await crewaiPython(), [script, join(dir, "cases.json")], {
    env: crewaiEnv,
    cwd: dir,
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const verdicts = JSON.parse(stdout) as CrewAIVerdict[];
  return new Map(verdicts.map((v) => [v.id, v]));
}

/** Runs a Python snippet with the CrewAI virtual environment's Python; its stdout. */
export async function crewaiPythonRun(code: string, args: string[] = []): Promise<string> {
  const { stdout } = await run(await crewaiPython(), ["-c", code, ...args], { env: crewaiEnv, timeout: 300_000 });
  return stdout;
}
