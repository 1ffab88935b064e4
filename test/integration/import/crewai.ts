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
  // Loading a fixture's crew.py writes no __pycache__ into the repository.
  PYTHONDONTWRITEBYTECODE: "1",
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
    human_input: boolean;
    structured_output: boolean;
    guardrail: string | null;
    guardrails: string[] | null;
    guardrail_max_retries: number;
  }[];
}

export interface VerdictCase {
  id: string;
  kind: "json-project" | "inline" | "crewbase" | "model-fields";
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

/**
 * A JSON-first project written by crewai-cli's own renderer of its `json_crew` templates (the functions
 * `crewai create crew` calls), from agents and tasks as its wizard collects them; the project's folder.
 */
export async function renderJsonCrewTemplate(
  folder: string,
  name: string,
  agents: { name: string; role: string; goal: string; backstory: string }[],
  tasks: {
    name: string;
    description: string;
    expected_output: string;
    agent: string;
    context: string[];
    output_file?: string;
  }[],
  inputs: Record<string, string>,
): Promise<string> {
  const code = `
import json, sys
from pathlib import Path
from crewai_cli.create_json_crew import _agent_to_jsonc, _crew_to_jsonc
folder, name, agents, tasks, inputs = Path(sys.argv[1]), sys.argv[2], *map(json.loads, sys.argv[3:6])
agents = [{**a, "llm": None, "tools": [], "planning": False, "allow_delegation": False} for a in agents]
(folder / "agents").mkdir(parents=True)
for agent in agents:
    (folder / "agents" / f"{agent['name']}.jsonc").write_text(_agent_to_jsonc(agent), encoding="utf-8")
settings = {"process": "sequential", "memory": False, "inputs": inputs}
(folder / "crew.jsonc").write_text(_crew_to_jsonc(name, agents, tasks, settings), encoding="utf-8")
`;
  await crewaiPythonRun(code, [folder, name, JSON.stringify(agents), JSON.stringify(tasks), JSON.stringify(inputs)]);
  return folder;
}

/** The crew the json_crew template test renders: two agents, a task taking the other's output, inputs with a default. */
export const templateCrew = {
  agents: [
    { name: "analyst", role: "{topic} analyst", goal: "Understand {topic}", backstory: "Reads the numbers first." },
    { name: "editor", role: "Editor for {audience}", goal: "Make it clear", backstory: "Cuts every extra word." },
  ],
  tasks: [
    {
      name: "analysis",
      description: "Analyse {topic}.",
      expected_output: "Three findings.",
      agent: "analyst",
      context: [],
    },
    {
      name: "edit",
      description: "Edit the analysis of {topic} for {audience}.",
      expected_output: "A short note.",
      agent: "editor",
      context: ["analysis"],
      output_file: "note.md",
    },
  ],
  inputs: { audience: "managers" },
};
