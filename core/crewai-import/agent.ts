import { placeholderName, type LlmConfig } from "../crew.ts";
import { MAX_MAX_ITER } from "../tools.ts";
import { isPythonReference, judgeFields } from "./apply-rules.ts";
import type { CrewAIAgent, CrewAIDefinition } from "./definition.ts";
import { agentFieldRules, PYTHON } from "./field-rules.ts";
import { fieldAt, type Findings } from "./findings.ts";
import { llmFromCrewAI, positiveInteger } from "./llm.ts";
import { agentAppsFromCrewAI, agentMcpsFromCrewAI, agentToolsFromCrewAI, type McpServerInput } from "./tools.ts";

/** CrewAI's max_iter when an agent sets none (kubecrew's own default is lower); a test reads it from the package. */
export const CREWAI_DEFAULT_MAX_ITER = 25;

/** The names CrewAI's JSON loader takes for its own Agent class in `type`. */
const AGENT_TYPES = ["agent", "Agent", "crewai.Agent", "crewai.agent.core.Agent"];

/** An agent of the Crew as an import writes it (defaults left to the schema). */
export interface AgentInput {
  name: string;
  role: string;
  goal: string;
  backstory: string;
  llm?: LlmConfig;
  mcps?: string[];
  apps?: string[];
  maxIter: number;
  allowDelegation?: boolean;
}

/**
 * A CrewAI agent as a Crew's agent, with the MCP servers it writes out (for spec.mcpServers). In JSON-first files an
 * agent's `settings` are fields of the agent too, and win over the same field written beside them (as in CrewAI).
 */
export function agentFromCrewAI(
  agent: CrewAIAgent,
  crew: Pick<CrewAIDefinition, "shape" | "llmMethods">,
  findings: Findings,
): { agent: AgentInput; servers: McpServerInput[] } | undefined {
  const before = findings.problems.length;
  const { settings, type, ...own } = agent.fields;
  const at = (field: string) => fieldAt(agent.origin, field);
  let fields = own;
  if (settings !== undefined && settings !== null) {
    if (typeof settings !== "object" || Array.isArray(settings)) findings.problem(at("settings"), "must be a mapping");
    else {
      judgeFields(settings as Record<string, unknown>, agentFieldRules, "agent", (f) => at(`settings.${f}`), findings);
      fields = { ...own, ...(settings as Record<string, unknown>) };
    }
  }
  judgeFields(own, agentFieldRules, "agent", at, findings);
  const where = (field: string) =>
    settings && typeof settings === "object" && field in settings ? `settings.${field}` : field;

  if (type !== undefined && type !== null && !(typeof type === "string" && AGENT_TYPES.includes(type))) {
    findings.problem(
      at("type"),
      isPythonReference(type) ? `a Python agent class: ${PYTHON}` : `CrewAI has no agent type ${JSON.stringify(type)}`,
    );
  }
  if (!placeholderName.safeParse(agent.name).success) {
    findings.problem(fieldAt(agent.origin), `agent name "${agent.name}" must match [A-Za-z_][A-Za-z0-9_-]*`);
  }
  const texts: Record<"role" | "goal" | "backstory", string> = { role: "", goal: "", backstory: "" };
  for (const field of ["role", "goal", "backstory"] as const) {
    const value = fields[field];
    // YAML's folded and literal blocks end with a line break, which says nothing.
    if (typeof value === "string" && (value.trim() || field === "backstory")) texts[field] = value.trimEnd();
    else findings.problem(at(where(field)), value === undefined ? "is required" : "must be a non-empty text");
  }

  let llm: LlmConfig | undefined;
  if (crew.shape === "yaml-project" && typeof fields.llm === "string" && crew.llmMethods?.includes(fields.llm)) {
    findings.problem(at("llm"), `names crew.py's @llm method ${fields.llm}, a model built in Python: ${PYTHON}`);
  } else if (crew.shape === "yaml-project" && fields.llm !== null && typeof fields.llm === "object") {
    // @CrewBase looks an agent's llm up among crew.py's @llm methods by name, which a mapping cannot be.
    findings.problem(at("llm"), 'CrewAI reads a model name here ("provider/model"), not a mapping: write it as one');
  } else if (fields.llm !== undefined && fields.llm !== null) {
    llm = llmFromCrewAI(fields.llm, at(where("llm")), findings);
  }
  if (fields.max_tokens !== undefined && fields.max_tokens !== null) {
    const tokens = positiveInteger(fields.max_tokens, at(where("max_tokens")), findings);
    if (tokens !== undefined && llm) llm.maxOutputTokens = tokens;
    else if (tokens !== undefined && fields.llm === undefined) {
      findings.problem(at(where("max_tokens")), "kubecrew sets it on the agent's model: give the agent an llm too");
    }
  }
  const allowDelegation = fields.allow_delegation;
  if (allowDelegation !== undefined && allowDelegation !== null && typeof allowDelegation !== "boolean") {
    findings.problem(at(where("allow_delegation")), "must be true or false");
  }
  let maxIter = CREWAI_DEFAULT_MAX_ITER;
  if (fields.max_iter !== undefined && fields.max_iter !== null) {
    const value = positiveInteger(fields.max_iter, at(where("max_iter")), findings);
    if (value !== undefined && value > MAX_MAX_ITER) {
      findings.problem(at(where("max_iter")), `kubecrew allows at most ${MAX_MAX_ITER} turns per task`);
    } else if (value !== undefined) maxIter = value;
  }

  const tools = { mcps: [] as string[], apps: [] as string[], servers: [] as McpServerInput[] };
  agentToolsFromCrewAI(fields.tools, at(where("tools")), tools, findings);
  agentAppsFromCrewAI(fields.apps, at(where("apps")), tools, findings);
  agentMcpsFromCrewAI(fields.mcps, at(where("mcps")), agent.name, tools, findings);

  if (findings.problems.length > before) return undefined;
  return {
    agent: {
      name: agent.name,
      ...texts,
      ...(llm ? { llm } : {}),
      ...(tools.mcps.length ? { mcps: tools.mcps } : {}),
      ...(tools.apps.length ? { apps: tools.apps } : {}),
      maxIter,
      ...(allowDelegation === true ? { allowDelegation: true } : {}),
    },
    servers: tools.servers,
  };
}
