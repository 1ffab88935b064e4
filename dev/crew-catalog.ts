import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { crew as crewSchema, type Crew } from "../core/crew.ts";

/** Loads every Crew found in the YAML files of a folder (the same manifests `kubectl apply` takes). */
export async function loadCrews(dir: string): Promise<Crew[]> {
  const files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  const crews: Crew[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), "utf8");
    for (const doc of parseAllDocuments(text)) {
      const value = doc.toJSON() as { kind?: string } | null;
      if (value?.kind !== "Crew") continue;
      const parsed = crewSchema.safeParse(value);
      if (!parsed.success) {
        const why = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
        throw new Error(`${join(dir, file)}: not a valid Crew: ${why}`);
      }
      crews.push(parsed.data);
    }
  }
  return crews;
}
