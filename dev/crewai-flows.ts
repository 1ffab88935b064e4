import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { API_VERSION } from "../core/api-group.ts";
import { FLOW_SCHEMA } from "../core/flow/definition.ts";
import { atomicActions, methodCrews } from "../core/flow/method-crews.ts";
import { judgeFlow } from "../core/flow/problems.ts";
import type { CrewAIDefinition } from "../core/crewai-import/definition.ts";
import { readCrewAIPath } from "./crewai-projects.ts";
import { flowName } from "./flow-catalog.ts";

/**
 * CrewAI's declarative flows on disk, for `kubecrew import crewai`: a `crewai.flow/v1` file (YAML or JSON), or the
 * project `crewai create flow NAME --declarative` lays out (`src/<name>/flow.yaml`), as a Flow manifest — the
 * document as the spec, unchanged but for a crew `from_declaration`, which is read and put inline (`with`).
 */

const FLOW_FILES = ["flow.yaml", "flow.yml", "flow.json"];

const isFile = (path: string) =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );

/** The flow document at `path` (a file, or a project folder's flow file), or undefined when it holds no flow. */
export async function findCrewAIFlow(path: string): Promise<{ file: string; document: unknown } | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return undefined;
  const candidates = info.isDirectory() ? await flowFilesIn(path) : [path];
  for (const file of candidates) {
    if (!/\.(ya?ml|json)$/.test(file)) continue;
    let document: unknown;
    try {
      document = parseYaml(await readFile(file, "utf8"), { uniqueKeys: true });
    } catch {
      continue; // not a readable flow: the crew import reports the file
    }
    if ((document as { schema?: unknown } | null)?.schema === FLOW_SCHEMA) return { file, document };
  }
  return undefined;
}

async function flowFilesIn(dir: string): Promise<string[]> {
  const roots = [dir];
  const src = await readdir(join(dir, "src"), { withFileTypes: true }).catch(() => []);
  for (const entry of src.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) roots.push(join(dir, "src", entry.name));
  }
  const files: string[] = [];
  for (const root of roots) {
    for (const name of FLOW_FILES) if (await isFile(join(root, name))) files.push(join(root, name));
  }
  return files;
}

export interface FlowManifest {
  apiVersion: string;
  kind: "Flow";
  metadata: { name: string; namespace?: string };
  spec: unknown;
}

export type ImportedFlow =
  { ok: true; manifest: FlowManifest; notes: string[] } | { ok: false; problems: string[]; notes: string[] };

/** The Flow manifest of a flow document, judged as kubecrew judges a Flow on apply: every problem named. */
export async function importCrewAIFlow(
  file: string,
  document: unknown,
  options: { name?: string; namespace?: string },
): Promise<ImportedFlow> {
  const judged = judgeFlow(document);
  if (!judged.ok) return { ok: false, problems: judged.problems.map((p) => `${file}: ${p}`), notes: [] };
  const name = options.name ?? flowName(judged.definition.name);
  if (!name) {
    return { ok: false, problems: [`${file}: its name makes no DNS label; give one with --name`], notes: [] };
  }
  const notes = atomicActions(judged.definition).flatMap(({ place, action }) =>
    action.call === "script" || action.call === "code"
      ? [`methods.${place.method}.do: call: ${action.call} runs Python: only the crewai runtime runs it`]
      : [],
  );
  const inlined = await inlineDeclaredCrews(file, document as FlowDocument);
  if (inlined.problems.length) return { ok: false, problems: inlined.problems, notes };
  // The crews its methods run, judged as kubecrew dev and the cluster judge them (the model does not matter here).
  const rejudged = judgeFlow(inlined.document);
  const crews = rejudged.ok ? methodCrews(name, rejudged.definition, { provider: "mock", model: "mock" }) : undefined;
  if (!rejudged.ok || (crews && !crews.ok)) {
    const problems = rejudged.ok ? (crews && !crews.ok ? crews.problems : []) : rejudged.problems;
    return { ok: false, problems: problems.map((p) => `${file}: ${p}`), notes };
  }
  const metadata = { name, ...(options.namespace ? { namespace: options.namespace } : {}) };
  return {
    ok: true,
    manifest: { apiVersion: API_VERSION, kind: "Flow", metadata, spec: inlined.document },
    notes: [...notes, ...inlined.notes],
  };
}

type Action = { call?: unknown; from_declaration?: unknown; with?: unknown; [key: string]: unknown };
type FlowDocument = { methods: Record<string, { do: Action & { do?: { name: string; action: Action }[] } }> };

/**
 * Each crew `from_declaration` (a JSON crew declaration, file or folder, relative to the flow's file as CrewAI
 * resolves it) read and written inline as CrewAI's CrewDefinition, so the Flow carries its crews with it.
 */
async function inlineDeclaredCrews(file: string, document: FlowDocument) {
  const copy = structuredClone(document);
  const problems: string[] = [];
  const notes: string[] = [];
  const inline = async (action: Action, at: string): Promise<Action> => {
    if (action.call !== "crew" || typeof action.from_declaration !== "string") return action;
    const path = resolve(dirname(file), action.from_declaration);
    const source = await readCrewAIPath(path);
    if (!source.definition || source.findings.problems.length) {
      problems.push(...source.findings.problems.map((p) => `${file}: ${at}.from_declaration: ${p}`));
      return action;
    }
    if (source.definition.shape !== "json-project") {
      problems.push(`${file}: ${at}.from_declaration: ${path} is not a JSON crew declaration (crew.jsonc)`);
      return action;
    }
    const { from_declaration: _from, ...rest } = action;
    notes.push(`${at}: the crew from_declaration ${action.from_declaration} is put inline (with)`);
    return { ...rest, with: crewDefinitionOf(source.definition) };
  };
  for (const [method, m] of Object.entries(copy.methods)) {
    if (m.do.call === "each" && Array.isArray(m.do.do)) {
      for (const step of m.do.do) step.action = await inline(step.action, `methods.${method}.do.${step.name}`);
    } else m.do = await inline(m.do, `methods.${method}.do`);
  }
  return { document: copy, problems, notes };
}

/** A JSON crew declaration as CrewAI's inline CrewDefinition: its agents' files read into `agents`. */
function crewDefinitionOf(definition: CrewAIDefinition): Record<string, unknown> {
  const fields = { ...definition.crew.fields };
  if (definition.manager) fields.manager_agent = definition.manager.fields;
  return {
    ...fields,
    agents: Object.fromEntries(definition.agents.map((a) => [a.name, a.fields])),
    tasks: definition.tasks.map((t) => t.fields),
  };
}
