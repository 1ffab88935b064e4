import type { Crew, LlmConfig } from "../crew.ts";
import { inlineDefinition } from "../crewai-import/definition.ts";
import { crewName } from "../crewai-import/crew-name.ts";
import { Findings } from "../crewai-import/findings.ts";
import { importCrewAI } from "../crewai-import/import-crew.ts";
import type { AtomicAction, FlowDefinition } from "./definition.ts";

/**
 * The crews a flow's methods run: a `call: crew` is its inline CrewAI crew, imported as `kubecrew import crewai`
 * imports one; a `call: agent` is a crew of that one agent with one task, the method's rendered `input` (the input
 * `flow_input`). Each runs as a child execution, its tasks as any crew's.
 */

/** The input an agent method's task is given. */
export const AGENT_INPUT = "flow_input";

/** Where an action sits: the method, and the each step when inside one. */
export interface ActionPlace {
  method: string;
  step?: string;
}

/** The child crew's name: `<flow>-<method>[-<step>]` as a DNS label. */
export function methodCrewName(flow: string, place: ActionPlace): string {
  const parts = [flow, place.method, ...(place.step ? [place.step] : [])];
  return crewName(parts.join("-")) ?? flow;
}

export interface FlowActionRef {
  place: ActionPlace;
  action: AtomicAction;
}

export function atomicActions(definition: FlowDefinition): FlowActionRef[] {
  return Object.entries(definition.methods).flatMap(([method, m]) =>
    m.do.call === "each"
      ? m.do.do.map((step) => ({ place: { method, step: step.name }, action: step.action }))
      : [{ place: { method }, action: m.do }],
  );
}

export type MethodCrews = { ok: true; crews: Crew[] } | { ok: false; problems: string[] };

export function methodCrews(flow: string, definition: FlowDefinition, llm: LlmConfig): MethodCrews {
  const crews: Crew[] = [];
  const problems: string[] = [];
  for (const { place, action } of atomicActions(definition)) {
    const name = methodCrewName(flow, place);
    const at = `methods.${place.method}${place.step ? `.do.${place.step}` : ""}.do`;
    let value: unknown;
    if (action.call === "crew" && action.with) {
      const { inputs, ...crew } = action.with;
      value = { ...crew, ...(inputs ? { inputs: blankTemplates(inputs) } : {}) };
    } else if (action.call === "agent") {
      const { input: _input, ...agent } = action.with;
      value = {
        agents: { agent },
        tasks: [
          {
            name: place.step ?? place.method,
            description: `{${AGENT_INPUT}}`,
            expected_output: "The answer to the request above, and nothing else.",
            agent: "agent",
          },
        ],
        inputs: { [AGENT_INPUT]: "" },
      };
    } else continue;
    const findings = new Findings();
    const definitionOf = inlineDefinition({ file: at, value }, name, findings);
    const imported = definitionOf && importCrewAI(definitionOf, { name }, findings);
    if (imported && imported.ok) {
      const crew = imported.crew;
      crews.push(crew.spec.llm ? crew : { ...crew, spec: { ...crew.spec, llm } });
    } else problems.push(...(imported ? imported.problems : findings.problems));
  }
  return problems.length ? { ok: false, problems } : { ok: true, crews };
}

/** The crew's own input defaults, with `${…}` left to the flow (rendered at run time). */
function blankTemplates(inputs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(inputs).map(([k, v]) => [k, typeof v === "string" && v.includes("${") ? "" : v]),
  );
}
