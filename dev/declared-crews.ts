import { dirname, relative, resolve } from "node:path";
import type { CrewAIDefinition } from "../core/crewai-import/definition.ts";
import { readCrewAIPath } from "./crewai-projects.ts";

type Action = { call?: unknown; from_declaration?: unknown; with?: unknown; [key: string]: unknown };
type FlowDocument = { methods?: Record<string, { do?: Action & { do?: { name: string; action: Action }[] } }> };

/**
 * Each crew `from_declaration` (a JSON crew declaration, file or folder, relative to the flow's file as CrewAI
 * resolves it) read and written inline as CrewAI's CrewDefinition, so the Flow carries its crews with it.
 */
export async function inlineDeclaredCrews(
  file: string,
  document: unknown,
): Promise<{ document: unknown; problems: string[]; notes: string[] }> {
  const problems: string[] = [];
  const notes: string[] = [];
  // Not a document at all: judged (and refused) as it is.
  if (document === null || typeof document !== "object") return { document, problems, notes };
  const copy = structuredClone(document) as FlowDocument;
  const inline = async (action: Action, at: string): Promise<Action> => {
    if (action?.call !== "crew" || typeof action.from_declaration !== "string") return action;
    const base = dirname(resolve(file));
    const path = resolve(base, action.from_declaration);
    // As CrewAI: a declaration is read only from the flow's folder and below.
    if (relative(base, path).startsWith("..")) {
      problems.push(`${file}: ${at}.from_declaration: ${action.from_declaration} is outside the flow's folder`);
      return action;
    }
    const source = await readCrewAIPath(path);
    if (!source.definition || source.findings.problems.length) {
      const found = source.findings.problems.length ? source.findings.problems : [`no crew declaration at ${path}`];
      problems.push(...found.map((p) => `${file}: ${at}.from_declaration: ${p}`));
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
  for (const [method, m] of Object.entries(copy.methods ?? {})) {
    if (!m?.do) continue;
    if (m.do.call === "each" && Array.isArray(m.do.do)) {
      for (const step of m.do.do) {
        if (step) step.action = await inline(step.action, `methods.${method}.do.${step.name}`);
      }
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
