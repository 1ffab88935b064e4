import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { CRD_VERSION } from "../core/api-group.ts";
import type { Crew } from "../core/crew.ts";
import { crew as crewSchema } from "../core/crew-resource.ts";
import { inlineDefinition } from "../core/crewai-import/definition.ts";
import { Findings } from "../core/crewai-import/findings.ts";
import { importCrewAI } from "../core/crewai-import/import-crew.ts";
import { unknownFields, type StructuralSchema } from "../kube/unknown-fields.ts";
import { repoRoot } from "./config.ts";
import { findCrewAIProjects, type CrewAISource } from "./crewai-projects.ts";
import { KubecrewError } from "../core/errors.ts";

/** The Crew CRD `kubectl apply` checks manifests against: the same file the chart installs. */
const CREW_CRD = join(repoRoot, "crds/crews.yaml");

/** Crew manifests that would not apply to a cluster: one line per problem, each naming its file and field. */
export class CrewManifestError extends KubecrewError {
  readonly code = "invalid_crew_manifest";
  readonly problems: string[];

  constructor(problems: string[]) {
    super(problems.join("\n"));
    this.name = "CrewManifestError";
    this.problems = problems;
  }
}

/**
 * Loads every Crew found in the YAML files of a folder (the same manifests `kubectl apply` takes), as strictly as
 * `kubectl apply` with strict field validation: a field the Crew CRD does not declare (a misspelt or not yet supported
 * key) is refused rather than dropped. Beside them, CrewAI's crews are imported as `kubecrew import crewai` does: a
 * project at the folder or in a folder directly in it (dev/crewai-projects.ts), and YAML files holding an inline
 * CrewAI definition (agents and tasks, no kind). Every problem of every file is reported at once; notes (what kubecrew
 * does differently for an imported crew) go to `onNote`, one line each.
 */
export async function loadCrews(dir: string, onNote: (note: string) => void = () => {}): Promise<Crew[]> {
  const schema = await crewCrdSchema();
  const files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  const crews: Crew[] = [];
  const problems: string[] = [];
  // Each crew's file, to name both when two crews have one name.
  const sources = new Map<string, string>();
  const add = (crew: Crew, path: string) => {
    const taken = sources.get(crew.metadata.name);
    if (taken) problems.push(`${path}: Crew ${JSON.stringify(crew.metadata.name)}: the name is taken by ${taken}`);
    else {
      sources.set(crew.metadata.name, path);
      crews.push(crew);
    }
  };
  const imported = (source: CrewAISource) => {
    const result = source.definition
      ? importCrewAI(source.definition, {}, source.findings)
      : { ok: false as const, problems: source.findings.problems, notes: source.findings.notes };
    result.notes.forEach(onNote);
    if (result.ok) add(result.crew, source.path);
    else problems.push(...result.problems);
  };
  for (const file of files) {
    const path = join(dir, file);
    const text = await readFile(path, "utf8");
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) {
        problems.push(...doc.errors.map((e) => `${path}: ${e.message.split("\n")[0]}`));
        continue;
      }
      const value = doc.toJSON() as { kind?: string; metadata?: { name?: unknown } } | null;
      if (isInlineCrewAI(value)) {
        const findings = new Findings();
        const definition = inlineDefinition({ file: path, value }, file.replace(/\.ya?ml$/, ""), findings);
        imported({ path, definition, findings });
        continue;
      }
      if (value?.kind !== "Crew") continue;
      const where = `${path}: Crew ${JSON.stringify(String(value.metadata?.name ?? "(unnamed)"))}`;
      const unknown = unknownFields(value, schema);
      problems.push(...unknown.map((field) => `${where}: unknown field "${field}"`));
      const parsed = crewSchema.safeParse(value);
      if (!parsed.success) {
        problems.push(...parsed.error.issues.map((i) => `${where}: ${fieldPath(i.path)}: ${i.message}`));
      } else if (!unknown.length) {
        add(parsed.data, path);
      }
    }
  }
  for (const project of await findCrewAIProjects(dir)) imported(project);
  if (problems.length) throw new CrewManifestError(problems);
  return crews;
}

/** A YAML document that is a CrewAI crew definition rather than a manifest: agents and tasks, no kind. */
function isInlineCrewAI(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    !("kind" in value) &&
    !("apiVersion" in value) &&
    "agents" in value &&
    "tasks" in value
  );
}

async function crewCrdSchema(): Promise<StructuralSchema> {
  const crd = parse(await readFile(CREW_CRD, "utf8")) as {
    spec: { versions: Array<{ name: string; schema: { openAPIV3Schema: StructuralSchema } }> };
  };
  const version = crd.spec.versions.find((v) => v.name === CRD_VERSION);
  if (!version) throw new Error(`${CREW_CRD}: no version ${CRD_VERSION}`);
  return version.schema.openAPIV3Schema;
}

/** `spec.agents[0].role`, as kubectl writes field paths. */
function fieldPath(path: PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)),
    "",
  );
}
