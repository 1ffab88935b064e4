import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { CRD_VERSION } from "../core/api-group.ts";
import { crew as crewSchema, type Crew } from "../core/crew.ts";
import { unknownFields, type StructuralSchema } from "../kube/unknown-fields.ts";
import { repoRoot } from "./config.ts";

/** The Crew CRD `kubectl apply` checks manifests against: the same file the chart installs. */
const CREW_CRD = join(repoRoot, "crds/crews.yaml");

/** Crew manifests that would not apply to a cluster: one line per problem, each naming its file and field. */
export class CrewManifestError extends Error {
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
 * key) is refused rather than dropped. Every problem of every file is reported at once.
 */
export async function loadCrews(dir: string): Promise<Crew[]> {
  const schema = await crewCrdSchema();
  const files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  const crews: Crew[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const path = join(dir, file);
    const text = await readFile(path, "utf8");
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) {
        problems.push(...doc.errors.map((e) => `${path}: ${e.message.split("\n")[0]}`));
        continue;
      }
      const value = doc.toJSON() as { kind?: string; metadata?: { name?: unknown } } | null;
      if (value?.kind !== "Crew") continue;
      const where = `${path}: Crew ${JSON.stringify(String(value.metadata?.name ?? "(unnamed)"))}`;
      const unknown = unknownFields(value, schema);
      problems.push(...unknown.map((field) => `${where}: unknown field "${field}"`));
      const parsed = crewSchema.safeParse(value);
      if (!parsed.success) {
        problems.push(...parsed.error.issues.map((i) => `${where}: ${fieldPath(i.path)}: ${i.message}`));
      } else if (!unknown.length) {
        crews.push(parsed.data);
      }
    }
  }
  if (problems.length) throw new CrewManifestError(problems);
  return crews;
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
