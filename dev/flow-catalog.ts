import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { API_VERSION } from "../core/api-group.ts";
import type { Crew, LlmConfig } from "../core/crew.ts";
import { crewName } from "../core/crewai-import/crew-name.ts";
import type { LoadedFlow } from "../api/flow-backend.ts";
import { FLOW_SCHEMA } from "../core/flow/definition.ts";
import { atomicActions, methodCrews } from "../core/flow/method-crews.ts";
import { annotatedHosts } from "../core/flow/flow-verdict.ts";
import { judgeFlow } from "../core/flow/problems.ts";
import { CrewManifestError } from "./crew-catalog.ts";
import { inlineDeclaredCrews } from "./declared-crews.ts";
import { unsupportedActionMessage } from "./flow-actions.ts";

type FlowMetadata = { name?: string; annotations?: Record<string, string> };

/** Refused flows: reported as refused crew manifests are (`kubecrew dev` prints each line and exits). */
export class FlowManifestError extends CrewManifestError {
  constructor(problems: string[]) {
    super(problems);
    this.name = "FlowManifestError";
  }
}

/** `ResearchReviewFlow` → `research-review-flow`. */
export function flowName(name: string): string | undefined {
  return crewName(name.replace(/([a-z0-9])([A-Z])/g, "$1-$2"));
}

/**
 * The flows in a folder's YAML and JSON files: `kind: Flow` manifests (the document is their spec) and bare
 * `crewai.flow/v1` documents, each judged whole (every problem named with its file); with the crews their crew, agent
 * and tool methods run, on `llm` where they name no model (a manifest's `kubecrew.io/allowed-hosts` annotation lists
 * where its tool methods' http_request may go).
 */
export async function loadFlows(dir: string, llm: LlmConfig): Promise<{ flows: LoadedFlow[]; crews: Crew[] }> {
  const files = (await readdir(dir)).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  const flows: LoadedFlow[] = [];
  const crews: Crew[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const path = join(dir, file);
    for (const doc of parseAllDocuments(await readFile(path, "utf8"))) {
      if (doc.errors.length) continue; // the crew catalog reports the file's syntax errors
      const value = doc.toJSON() as Record<string, unknown> | null;
      const manifest = value?.kind === "Flow" && value.apiVersion === API_VERSION;
      if (!manifest && value?.schema !== FLOW_SCHEMA) continue;
      const metadata = manifest ? (value!.metadata as FlowMetadata | undefined) : undefined;
      const given = metadata?.name;
      const where = `${path}: Flow`;
      // A crew from_declaration is read from beside the file and put inline, as `kubecrew import crewai` does.
      const inlined = await inlineDeclaredCrews(path, manifest ? value!.spec : value);
      if (inlined.problems.length) {
        problems.push(...inlined.problems);
        continue;
      }
      const judged = judgeFlow(inlined.document);
      if (!judged.ok) {
        problems.push(...judged.problems.map((p) => `${where}: ${p}`));
        continue;
      }
      const name = given ?? flowName(judged.definition.name);
      if (!name) {
        problems.push(`${where}: its name makes no DNS label; give it one in metadata.name`);
        continue;
      }
      const refused = atomicActions(judged.definition).flatMap(({ place, action }) => {
        const message = unsupportedActionMessage(action, `methods.${place.method}.do`);
        return message ? [message] : [];
      });
      const hosts = annotatedHosts(metadata?.annotations);
      if (!hosts.ok) refused.push(hosts.problem);
      const childCrews = methodCrews(name, judged.definition, llm, { allowedHosts: hosts.ok ? hosts.value : [] });
      if (refused.length || !childCrews.ok) {
        problems.push(
          ...[...refused, ...(childCrews.ok ? [] : childCrews.problems)].map((p) => `${where} "${name}": ${p}`),
        );
        continue;
      }
      if (flows.some((f) => f.name === name)) problems.push(`${where}: the name "${name}" is taken`);
      flows.push({ name, definition: judged.definition, file: path });
      crews.push(...childCrews.crews);
    }
  }
  if (problems.length) throw new FlowManifestError(problems);
  return { flows, crews };
}
