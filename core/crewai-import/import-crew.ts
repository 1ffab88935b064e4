import { API_VERSION } from "../api-group.ts";
import {
  crewProcesses,
  placeholderName,
  type Crew,
  type CrewProcess,
  type CrewRuntime,
  type LlmConfig,
} from "../crew.ts";
import { crew as crewSchema } from "../crew-resource.ts";
import { placeholdersIn } from "../inputs.ts";
import type { Json } from "../json.ts";
import { agentFromCrewAI, type AgentInput } from "./agent.ts";
import { judgeFields } from "./apply-rules.ts";
import { crewName } from "./crew-name.ts";
import type { CrewAIDefinition } from "./definition.ts";
import { crewFieldRules } from "./field-rules.ts";
import { fieldAt, Findings } from "./findings.ts";
import { managerFromCrewAI } from "./manager.ts";
import { taskFromCrewAI, type TaskInput } from "./task.ts";
import type { McpServerInput } from "./tools.ts";

export interface ImportOptions {
  /** metadata.name; default: the crew's name, else the project's folder or the file's stem. */
  name?: string;
  namespace?: string;
  runtime?: CrewRuntime;
  /** spec.llm: the model of agents that name none. */
  llm?: LlmConfig;
}

/** The Crew manifest an import writes: only what the CrewAI definition says, defaults left to the schema. */
export interface CrewManifest {
  apiVersion: typeof API_VERSION;
  kind: "Crew";
  metadata: { name: string; namespace?: string };
  spec: {
    inputs?: { name: string; default?: Json }[];
    llm?: LlmConfig;
    mcpServers?: McpServerInput[];
    agents: AgentInput[];
    tasks: TaskInput[];
    process: CrewProcess;
    managerLlm?: LlmConfig;
    managerAgent?: AgentInput;
    runtime?: CrewRuntime;
  };
}

export type ImportResult =
  | { ok: true; manifest: CrewManifest; crew: Crew; notes: string[] }
  | { ok: false; problems: string[]; notes: string[] };

/**
 * A CrewAI crew as a kubecrew Crew. Every field is carried, noted (kubecrew does without it, results unchanged) or
 * refused with what to do instead; the crew is refused when anything is, so nothing is lost on the way.
 */
export function importCrewAI(
  definition: CrewAIDefinition,
  options: ImportOptions = {},
  findings = new Findings(),
): ImportResult {
  const { fields, origin } = definition.crew;
  const at = (field: string) => fieldAt(origin, field);
  judgeFields(fields, crewFieldRules, "crew", at, findings);

  const hierarchical = fields.process === "hierarchical";
  if (fields.process !== undefined && fields.process !== null && !crewProcesses.includes(fields.process as never)) {
    findings.problem(at("process"), "must be sequential or hierarchical");
  }
  const manager = managerFromCrewAI(definition, findings);
  if (hierarchical && !manager.llm && !manager.agent && fields.manager_llm == null && fields.manager_agent == null) {
    findings.problem(
      at("process"),
      definition.shape === "yaml-project"
        ? "the hierarchical process needs a manager, which crew.py gives in Python (manager_llm or manager_agent) and kubecrew cannot read: add managerLlm to the imported Crew, or deploy the crew on the crewai runtime with an image holding your project"
        : "the hierarchical process needs a manager: set manager_llm or manager_agent",
    );
  }

  const name = crewName(options.name ?? (typeof fields.name === "string" ? fields.name : definition.nameHint));
  if (!name) {
    findings.problem(
      options.name !== undefined ? "--name" : at("name"),
      "makes no crew name (lowercase letters, digits and '-'): give one with --name",
    );
  }

  const inputs: { name: string; default?: Json }[] = [];
  if (fields.inputs !== undefined && fields.inputs !== null) {
    if (typeof fields.inputs !== "object" || Array.isArray(fields.inputs)) {
      findings.problem(at("inputs"), "must map input names to their default values");
    } else {
      for (const [input, value] of Object.entries(fields.inputs)) {
        if (!placeholderName.safeParse(input).success) {
          findings.problem(at(`inputs.${input}`), "an input's name must match [A-Za-z_][A-Za-z0-9_-]*");
        } else inputs.push({ name: input, default: value as Json });
      }
    }
  }

  const agents: AgentInput[] = [];
  const servers: McpServerInput[] = [];
  for (const agent of definition.agents) {
    const mapped = agentFromCrewAI(agent, definition, findings);
    if (mapped) {
      agents.push(mapped.agent);
      servers.push(...mapped.servers);
    }
  }
  const agentNames = new Set(definition.agents.map((a) => a.name));
  const tasks: TaskInput[] = [];
  const earlier = new Set<string>();
  for (const [i, task] of definition.tasks.entries()) {
    const mapped = taskFromCrewAI(task, i, findings, hierarchical);
    // The references are checked on what is written, so a task with other problems still has them said.
    const { name: taskName, agent: agentName, context } = task.fields;
    const taskAt = (field: string) => fieldAt(task.origin, field);
    if (typeof agentName === "string" && agentName && !agentNames.has(agentName)) {
      findings.problem(taskAt("agent"), `names agent "${agentName}", which the crew does not define`);
    }
    for (const c of Array.isArray(context) ? context : []) {
      if (typeof c === "string" && !earlier.has(c)) {
        findings.problem(taskAt("context"), `names "${c}", which is not a task defined before this one`);
      }
    }
    if (typeof taskName === "string" && earlier.has(taskName)) {
      findings.problem(taskAt("name"), `another task is named "${taskName}": kubecrew reports each task by its name`);
    }
    earlier.add(typeof taskName === "string" ? taskName : `task_${i + 1}`);
    if (mapped) tasks.push(mapped);
  }

  if (findings.problems.length || !name) return { ok: false, problems: findings.problems, notes: findings.notes };

  const declared = new Set(inputs.map((i) => i.name));
  const texts = [
    ...tasks.flatMap((t) => [t.description, t.expectedOutput]),
    ...agents.flatMap((a) => [a.role, a.goal, a.backstory]),
  ];
  for (const placeholder of new Set(texts.flatMap(placeholdersIn))) {
    if (!declared.has(placeholder)) inputs.push({ name: placeholder });
  }
  const manifest: CrewManifest = {
    apiVersion: API_VERSION,
    kind: "Crew",
    metadata: { name, ...(options.namespace ? { namespace: options.namespace } : {}) },
    spec: {
      ...(inputs.length ? { inputs } : {}),
      ...(options.llm ? { llm: options.llm } : {}),
      ...(servers.length ? { mcpServers: servers } : {}),
      agents,
      tasks,
      process: hierarchical ? "hierarchical" : "sequential",
      ...(manager.llm ? { managerLlm: manager.llm } : {}),
      ...(manager.agent ? { managerAgent: manager.agent } : {}),
      ...(options.runtime ? { runtime: options.runtime } : {}),
    },
  };
  // The rules kubecrew's own Crew adds (CrewAI's asynchronous-task rules among them), said against the source file.
  const parsed = crewSchema.safeParse(manifest);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) findings.problem(origin.file, issue.message);
    return { ok: false, problems: findings.problems, notes: findings.notes };
  }
  return { ok: true, manifest, crew: parsed.data, notes: findings.notes };
}
