import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { API_VERSION } from "../core/api-group.ts";
import { FLOW_SCHEMA } from "../core/flow/definition.ts";
import { atomicActions, methodCrews } from "../core/flow/method-crews.ts";
import { judgeFlow } from "../core/flow/problems.ts";
import { inlineDeclaredCrews } from "./declared-crews.ts";
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
  const inlined = await inlineDeclaredCrews(file, document);
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
