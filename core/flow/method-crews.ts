import { API_VERSION } from "../api-group.ts";
import type { Crew, LlmConfig } from "../crew.ts";
import { crew as crewSchema } from "../crew-resource.ts";
import { inlineDefinition } from "../crewai-import/definition.ts";
import { crewName } from "../crewai-import/crew-name.ts";
import { Findings } from "../crewai-import/findings.ts";
import { schemaProblems } from "../schema-problems.ts";
import { importCrewAI } from "../crewai-import/import-crew.ts";
import type { AtomicAction, FlowDefinition } from "./definition.ts";
import { resolveToolRef, type ToolTarget } from "./tool-calls.ts";

/**
 * The crews a flow's methods run: a `call: crew` is its inline CrewAI crew, imported as `kubecrew import crewai`
 * imports one; a `call: agent` is a crew of that one agent with one task, the method's rendered `input` (the input
 * `flow_input`); a `call: tool` is a crew of one agent offering that one tool and one task calling it with the
 * method's rendered `with` (the input `flow_input`, as JSON), no model. Each runs as a child execution, its tasks as
 * any crew's.
 */

/** The input an agent method's task is given, and a tool method's arguments. */
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

export interface MethodCrewOptions {
  /** The hosts a tool method's http_request may call (the crews' toolPolicy.allowedHosts). */
  allowedHosts?: string[];
}

export function methodCrews(
  flow: string,
  definition: FlowDefinition,
  llm: LlmConfig,
  options: MethodCrewOptions = {},
): MethodCrews {
  const crews: Crew[] = [];
  const problems: string[] = [];
  for (const { place, action } of atomicActions(definition)) {
    const name = methodCrewName(flow, place);
    const at = `methods.${place.method}${place.step ? `.do.${place.step}` : ""}.do`;
    if (action.call === "tool") {
      const resolved = resolveToolRef(action.ref);
      if (!resolved.ok) problems.push(`${at}.ref: ${resolved.problem}`);
      else {
        const parsed = crewSchema.safeParse(toolCrew(name, place, action.ref, resolved.target, options.allowedHosts));
        if (parsed.success) crews.push(parsed.data);
        else problems.push(...schemaProblems(parsed.error).map((p) => `${at}: ${p}`));
      }
      continue;
    }
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

/** Whether a crew's tasks all call a tool directly: it uses no model. */
export function callsToolsOnly(crew: Crew): boolean {
  return crew.spec.tasks.every((t) => t.toolCall);
}

/** The crew of a tool method: one agent that offers the tool, one task that calls it with the `flow_input` JSON. */
function toolCrew(name: string, place: ActionPlace, ref: string, target: ToolTarget, allowedHosts?: string[]) {
  return {
    apiVersion: API_VERSION,
    kind: "Crew",
    metadata: { name },
    spec: {
      inputs: [{ name: AGENT_INPUT, default: "{}" }],
      toolPolicy: { allowedHosts: allowedHosts ?? [] },
      agents: [{ name: "tool", role: "Tool call", goal: `Call ${ref}`, ...target.agent }],
      tasks: [
        {
          name: place.step ?? place.method,
          description: `Call ${ref} with the flow's arguments.`,
          expectedOutput: "The tool's result.",
          agent: "tool",
          toolCall: { tool: target.tool, arguments: `{${AGENT_INPUT}}` },
        },
      ],
    },
  };
}

/** The crew's own input defaults, with `${…}` left to the flow (rendered at run time). */
function blankTemplates(inputs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(inputs).map(([k, v]) => [k, typeof v === "string" && v.includes("${") ? "" : v]),
  );
}
