import type { LlmConfig } from "../crew.ts";
import { isPythonReference } from "./apply-rules.ts";
import { agentFromCrewAI, type AgentInput } from "./agent.ts";
import type { CrewAIDefinition } from "./definition.ts";
import { PYTHON } from "./field-rules.ts";
import { fieldAt, type Findings } from "./findings.ts";
import { llmFromCrewAI } from "./llm.ts";

/**
 * A hierarchical crew's manager: CrewAI's manager_llm as managerLlm, and manager_agent (a JSON-first project's
 * agents/<name>.jsonc, named as CrewAI's JSON loader names it) as managerAgent. A manager made in Python is refused,
 * and so is one written any other way (CrewAI's CrewDefinition refuses an inline one too).
 */
export function managerFromCrewAI(
  definition: CrewAIDefinition,
  findings: Findings,
): { llm?: LlmConfig; agent?: AgentInput } {
  const { fields, origin } = definition.crew;
  const at = (field: string) => fieldAt(origin, field);
  const result: { llm?: LlmConfig; agent?: AgentInput } = {};
  if (fields.manager_llm !== undefined && fields.manager_llm !== null) {
    const llm = llmFromCrewAI(fields.manager_llm, at("manager_llm"), findings);
    if (llm) result.llm = llm;
  }
  const value = fields.manager_agent;
  if (value === undefined || value === null) return result;
  if (definition.manager) {
    if (definition.agents.some((a) => a.name === definition.manager!.name)) {
      findings.problem(
        at("manager_agent"),
        "the manager cannot be one of the crew's agents: give it an agent of its own",
      );
    }
    const mapped = agentFromCrewAI(definition.manager, definition, findings);
    if (mapped?.servers.length || mapped?.agent.mcps?.length || mapped?.agent.apps?.length) {
      findings.problem(at("manager_agent"), "a manager has no tools of its own: give its tools to an agent");
    } else if (mapped) result.agent = { ...mapped.agent, allowDelegation: true };
  } else if (isPythonReference(value)) {
    findings.problem(at("manager_agent"), `a manager made in Python: ${PYTHON}`);
  } else {
    findings.problem(
      at("manager_agent"),
      "must name an agent definition of a JSON-first project (agents/<name>.jsonc); here: use manager_llm",
    );
  }
  return result;
}
