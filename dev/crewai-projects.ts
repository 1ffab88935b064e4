import { readdir, readFile, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { decoratedMethodsOfCrewPy, processFromCrewPy } from "../core/crewai-import/crew-py.ts";
import {
  inlineDefinition,
  jsonProjectDefinition,
  yamlProjectDefinition,
  type AgentFile,
  type CrewAIDefinition,
  type CrewPy,
} from "../core/crewai-import/definition.ts";
import { Findings } from "../core/crewai-import/findings.ts";
import { parseJsonc } from "../core/crewai-import/jsonc.ts";

/**
 * Finding and reading CrewAI's crews on disk: a YAML project (`config/agents.yaml` + `config/tasks.yaml`, at its root
 * or under `src/<name>/` as `crewai create crew --classic` lays it out), a JSON-first project (`crew.jsonc` or
 * `crew.json` with `agents/<name>.jsonc`), or one inline definition file (YAML or JSON).
 */

/** A CrewAI crew found on disk: what was read of it, and the problems and notes reading it gave. */
export interface CrewAISource {
  /** The folder or file it was found at. */
  path: string;
  definition: CrewAIDefinition | undefined;
  findings: Findings;
}

const exists = (path: string) =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );

/** The CrewAI projects in a folder: the folder itself, or each folder directly in it (hidden ones aside). */
export async function findCrewAIProjects(dir: string): Promise<CrewAISource[]> {
  const here = await readProjectFolder(dir);
  if (here.length) return here;
  const entries = await readdir(dir, { withFileTypes: true });
  const found: CrewAISource[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || entry.name.startsWith(".") || entry.name === "node_modules") continue;
    found.push(...(await readProjectFolder(join(dir, entry.name))));
  }
  return found;
}

/**
 * What `kubecrew import crewai PATH` reads: a project folder (one crew; a folder holding several asks for one of
 * them), a JSON-first crew file, or an inline definition file.
 */
export async function readCrewAIPath(path: string): Promise<CrewAISource> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return failed(path, "no such file or folder");
  if (info.isDirectory()) {
    const projects = await readProjectFolder(path);
    if (projects.length === 1) return projects[0]!;
    if (projects.length > 1) {
      return failed(path, `holds ${projects.length} crews (${projects.map((p) => p.path).join(", ")}): name one`);
    }
    return failed(
      path,
      "is not a CrewAI project: no config/agents.yaml and config/tasks.yaml (or src/<name>/config/…), no crew.jsonc",
    );
  }
  const stem = basename(path, extname(path));
  if (/^crew\.jsonc?$/.test(basename(path))) return readJsonProject(path, basename(join(path, "..")));
  return readInline(path, stem);
}

async function readProjectFolder(dir: string): Promise<CrewAISource[]> {
  for (const file of ["crew.jsonc", "crew.json"]) {
    if (await exists(join(dir, file))) return [await readJsonProject(join(dir, file), basename(dir))];
  }
  if (await isYamlProjectRoot(dir)) return [await readYamlProject(dir, dir, basename(dir))];
  const src = join(dir, "src");
  const packages = await readdir(src, { withFileTypes: true }).catch(() => []);
  const projects: CrewAISource[] = [];
  for (const entry of packages.sort((a, b) => a.name.localeCompare(b.name))) {
    const root = join(src, entry.name);
    if (entry.isDirectory() && (await isYamlProjectRoot(root))) {
      projects.push(await readYamlProject(dir, root, entry.name));
    }
  }
  return projects;
}

async function isYamlProjectRoot(dir: string): Promise<boolean> {
  return (await exists(join(dir, "config/agents.yaml"))) && (await exists(join(dir, "config/tasks.yaml")));
}

function failed(path: string, problem: string): CrewAISource {
  const findings = new Findings();
  findings.problem(path, problem);
  return { path, definition: undefined, findings };
}

/** A file's parsed value, or undefined with the problem recorded (one line: the parser's first). */
async function readParsed(
  file: string,
  parser: (text: string) => unknown,
  findings: Findings,
): Promise<{ file: string; value: unknown } | undefined> {
  try {
    return { file, value: parser(await readFile(file, "utf8")) };
  } catch (err) {
    findings.problem(file, (err instanceof Error ? err.message : String(err)).split("\n")[0]!);
    return undefined;
  }
}

/** YAML as CrewAI reads its config files: one document; a file without a mapping holds nothing. */
const yamlValue = (text: string): unknown => parseYaml(text, { uniqueKeys: true }) as unknown;

async function readYamlProject(projectDir: string, root: string, name: string): Promise<CrewAISource> {
  const findings = new Findings();
  const agents = await readParsed(join(root, "config/agents.yaml"), yamlValue, findings);
  const tasks = await readParsed(join(root, "config/tasks.yaml"), yamlValue, findings);
  const crewPyFile = join(root, "crew.py");
  const crewPy: CrewPy = { origin: { file: crewPyFile, path: "" }, fields: {}, taskMethods: [], llmMethods: [] };
  if (await exists(crewPyFile)) {
    const source = await readFile(crewPyFile, "utf8");
    const read = processFromCrewPy(source);
    if (read.process) crewPy.fields.process = read.process;
    if (read.note) findings.note(crewPyFile, read.note);
    crewPy.taskMethods = decoratedMethodsOfCrewPy(source, "task");
    crewPy.llmMethods = decoratedMethodsOfCrewPy(source, "llm");
    findings.note(
      crewPyFile,
      "read for its process and its methods' names only: what it sets in Python (tools, output_file, …) is not carried",
    );
  } else {
    findings.note(root, "no crew.py: the crew runs sequential, CrewAI's default process");
  }
  const definition = agents && tasks ? yamlProjectDefinition(agents, tasks, crewPy, name, findings) : undefined;
  return { path: projectDir, definition, findings };
}

async function readJsonProject(crewFile: string, name: string): Promise<CrewAISource> {
  const findings = new Findings();
  const crew = await readParsed(crewFile, parseJsonc, findings);
  if (!crew) return { path: crewFile, definition: undefined, findings };
  const agentsDir = join(crewFile, "..", "agents");
  const files = new Map<string, AgentFile>();
  const names = (crew.value as { agents?: unknown } | null)?.agents;
  for (const agent of Array.isArray(names) ? names : []) {
    if (typeof agent !== "string" || !agent || files.has(agent)) continue;
    files.set(agent, await readAgentFile(agentsDir, agent));
  }
  const definition = jsonProjectDefinition(
    crew,
    (agent) => files.get(agent) ?? { error: `agent "${agent}" was not read` },
    name,
    findings,
  );
  return { path: crewFile, definition, findings };
}

async function readAgentFile(agentsDir: string, agent: string): Promise<AgentFile> {
  if (!/^[A-Za-z0-9_.-]+$/.test(agent) || agent.startsWith(".")) {
    return { error: `"${agent}" is not an agent file's name` };
  }
  for (const ext of [".jsonc", ".json"]) {
    const file = join(agentsDir, `${agent}${ext}`);
    if (!(await exists(file))) continue;
    try {
      return { file, value: parseJsonc(await readFile(file, "utf8")) };
    } catch (err) {
      return { file, error: err instanceof Error ? err.message : String(err) };
    }
  }
  return { error: `agent "${agent}" has no file in ${agentsDir} (${agent}.jsonc or ${agent}.json)` };
}

async function readInline(file: string, name: string): Promise<CrewAISource> {
  const findings = new Findings();
  const parser = /\.jsonc?$/.test(file) ? parseJsonc : yamlValue;
  const parsed = await readParsed(file, parser, findings);
  const definition = parsed ? inlineDefinition(parsed, name, findings) : undefined;
  return { path: file, definition, findings };
}
