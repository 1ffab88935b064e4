import { crewName } from "../crewai-import/crew-name.ts";
import { flowDefinition, type FlowDefinition } from "./definition.ts";
import { atomicActions, type ActionPlace } from "./method-crews.ts";

/**
 * A `call: crew` with `from_declaration` on a cluster: the path (a JSON crew declaration, folder or file, as CrewAI
 * resolves it beside the flow's file) cannot be read there, so it names a Crew of the Flow's namespace instead — the
 * one `kubecrew import crewai <path>` makes of it: the folder's name, or the file's without its extension (a
 * project's `crew.jsonc` goes by its folder's), as a DNS label. `crews/research_crew` → `research-crew`.
 */

const DECLARATION_FILE = /\.(jsonc?|ya?ml)$/i;
const PROJECT_FILES = new Set(["crew.json", "crew.jsonc"]);

/** The Crew a declaration path names, or undefined when no DNS label can be made of it. */
export function declaredCrewName(path: string): string | undefined {
  const parts = path.split(/[\\/]+/).filter((p) => p && p !== ".");
  let last = parts.pop();
  if (last && PROJECT_FILES.has(last.toLowerCase())) last = parts.pop();
  return last === undefined || last === ".." ? undefined : crewName(last.replace(DECLARATION_FILE, ""));
}

export interface DeclaredCrew {
  place: ActionPlace;
  /** Where the action is in the document, for messages: `methods.<m>.do[.<step>.do]`. */
  at: string;
  path: string;
  /** The Crew's name; undefined when the path makes none. */
  crew: string | undefined;
}

/** Every crew a flow's methods take from a declaration. */
export function declaredCrews(definition: FlowDefinition): DeclaredCrew[] {
  return atomicActions(definition).flatMap(({ place, action }) =>
    action.call === "crew" && action.from_declaration
      ? [
          {
            place,
            at: `methods.${place.method}${place.step ? `.do.${place.step}` : ""}.do`,
            path: action.from_declaration,
            crew: declaredCrewName(action.from_declaration),
          },
        ]
      : [],
  );
}

/** The Crews a Flow's spec takes from declarations (none when it is not a flow document). */
export function declaredCrewNames(spec: unknown): string[] {
  const parsed = flowDefinition.safeParse(spec);
  return parsed.success ? declaredCrews(parsed.data).flatMap((d) => (d.crew ? [d.crew] : [])) : [];
}
