import type { Findings } from "./findings.ts";
import { fieldAt, inside, type Origin } from "./findings.ts";

/**
 * A CrewAI crew as read from any of its three shapes, before it is mapped to a Crew: a YAML project
 * (`config/agents.yaml` + `config/tasks.yaml`), a JSON-first project (`crew.jsonc` + `agents/<name>.jsonc`) or an
 * inline definition (CrewAI's CrewDefinition, YAML or JSON). Field names are CrewAI's, values as written.
 */
export interface CrewAIDefinition {
  /** The crew's fields other than agents and tasks (process, memory, inputs, …). */
  crew: { fields: Record<string, unknown>; origin: Origin };
  agents: CrewAIAgent[];
  tasks: CrewAITask[];
  /** A name for the crew when its fields have none (the project's folder, the file's stem). */
  nameHint: string;
  shape: "yaml-project" | "json-project" | "inline";
  /** The crew's manager_agent, read as an agent (a JSON-first project's agents/<name>.jsonc, an inline mapping). */
  manager?: CrewAIAgent;
  /** A YAML project's crew.py `@llm` methods: an agent's llm naming one is a model built in Python. */
  llmMethods?: string[];
}

/** What a YAML project's crew.py says, read as text: its process (among crew fields) and its methods. */
export interface CrewPy {
  origin: Origin;
  fields: Record<string, unknown>;
  /** `@task` methods in order (none: tasks.yaml's order). */
  taskMethods: string[];
  llmMethods: string[];
}

export interface CrewAIAgent {
  name: string;
  fields: Record<string, unknown>;
  origin: Origin;
}

export interface CrewAITask {
  fields: Record<string, unknown>;
  origin: Origin;
}

export type Parsed = { file: string; value: unknown };

/** An object's own fields, or a problem when the value is not an object. */
function objectAt(value: unknown, at: string, findings: Findings): Record<string, unknown> | undefined {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  findings.problem(at, "must be a mapping of fields");
  return undefined;
}

/**
 * A YAML project: agents.yaml maps agent names to their fields, tasks.yaml task names to theirs, in the order they
 * run. The process comes from crew.py (read without running it) and is put among the crew's fields.
 */
export function yamlProjectDefinition(
  agentsFile: Parsed,
  tasksFile: Parsed,
  crewPy: CrewPy,
  nameHint: string,
  findings: Findings,
): CrewAIDefinition | undefined {
  const agentsMap = objectAt(agentsFile.value ?? {}, agentsFile.file, findings);
  const tasksMap = objectAt(tasksFile.value ?? {}, tasksFile.file, findings);
  if (!agentsMap || !tasksMap) return undefined;
  const agents: CrewAIAgent[] = [];
  for (const [name, value] of Object.entries(agentsMap)) {
    const origin = { file: agentsFile.file, path: name };
    const fields = objectAt(value, fieldAt(origin), findings);
    if (fields) agents.push({ name, fields, origin });
  }
  const tasks: CrewAITask[] = [];
  for (const [name, value] of Object.entries(tasksMap)) {
    const origin = { file: tasksFile.file, path: name };
    const fields = objectAt(value, fieldAt(origin), findings);
    if (!fields) continue;
    if (fields.name !== undefined && fields.name !== name) {
      findings.problem(
        fieldAt(origin, "name"),
        `kubecrew names a task by its key in ${tasksFile.file} ("${name}"), which its context names it by: remove name`,
      );
    }
    tasks.push({ fields: { ...fields, name }, origin });
  }
  if (!agents.length) findings.problem(agentsFile.file, "defines no agent");
  if (!tasks.length) findings.problem(tasksFile.file, "defines no task");
  const { taskMethods, origin } = crewPy;
  return {
    crew: { fields: crewPy.fields, origin },
    agents,
    tasks: taskMethods.length ? inMethodOrder(tasks, taskMethods, origin.file, findings) : tasks,
    nameHint,
    shape: "yaml-project",
    llmMethods: crewPy.llmMethods,
  };
}

/**
 * The tasks @CrewBase runs: those crew.py has a `@task` method for, in the methods' order. A task of tasks.yaml
 * without a method is not run (by CrewAI either); a method without a task in tasks.yaml builds its task in Python.
 */
function inMethodOrder(tasks: CrewAITask[], methods: string[], crewPy: string, findings: Findings): CrewAITask[] {
  const byName = new Map(tasks.map((t) => [t.fields.name as string, t]));
  for (const task of tasks) {
    if (!methods.includes(task.fields.name as string)) {
      findings.note(fieldAt(task.origin), "left out: crew.py has no @task method for it, so CrewAI does not run it");
    }
  }
  const ordered: CrewAITask[] = [];
  for (const method of methods) {
    const task = byName.get(method);
    if (task) ordered.push(task);
    else {
      findings.problem(
        crewPy,
        `@task ${method}: a task written in Python only, which kubecrew cannot read: write it in config/tasks.yaml ` +
          "under that name, or deploy the crew on the crewai runtime with an image holding your project",
      );
    }
  }
  return ordered;
}

/** What reading `agents/<name>.jsonc` gave: its value, or why there is none. */
export type AgentFile = Parsed | { file?: string; error: string };

/**
 * A JSON-first project: crew.jsonc lists its agents by name (each in `agents/<name>.jsonc`, read by the caller) and
 * holds its tasks and crew fields.
 */
export function jsonProjectDefinition(
  crewFile: Parsed,
  agentFiles: (name: string) => AgentFile,
  nameHint: string,
  findings: Findings,
): CrewAIDefinition | undefined {
  const crew = objectAt(crewFile.value, crewFile.file, findings);
  if (!crew) return undefined;
  const origin: Origin = { file: crewFile.file, path: "" };
  const { agents: names, tasks: taskList, ...crewFields } = crew;
  if (!Array.isArray(names) || !names.length) {
    findings.problem(fieldAt(origin, "agents"), "must be a non-empty list of agent names (agents/<name>.jsonc)");
  }
  const agents: CrewAIAgent[] = [];
  for (const [i, name] of (Array.isArray(names) ? names : []).entries()) {
    if (typeof name !== "string" || !name) {
      findings.problem(fieldAt(origin, `agents[${i}]`), "must be an agent's name");
      continue;
    }
    if (agents.some((a) => a.name === name)) continue;
    const file = agentFiles(name);
    if ("error" in file) {
      findings.problem(file.file ?? fieldAt(origin, `agents[${i}]`), file.error);
      continue;
    }
    const fields = objectAt(file.value, file.file, findings);
    if (fields) agents.push({ name, fields, origin: { file: file.file, path: "" } });
  }
  const tasks = taskListOf(taskList, origin, findings);
  // CrewAI's JSON loader reads a manager_agent given by name from agents/<name>.jsonc, as it reads the agents.
  let manager: CrewAIAgent | undefined;
  const managerName = crewFields.manager_agent;
  if (typeof managerName === "string" && managerName) {
    const file = agentFiles(managerName);
    if ("error" in file) findings.problem(file.file ?? fieldAt(origin, "manager_agent"), file.error);
    else {
      const fields = objectAt(file.value, file.file, findings);
      if (fields) manager = { name: managerName, fields, origin: { file: file.file, path: "" } };
    }
  }
  return {
    crew: { fields: crewFields, origin },
    agents,
    tasks,
    nameHint,
    shape: "json-project",
    ...(manager ? { manager } : {}),
  };
}

/**
 * An inline definition (CrewAI's CrewDefinition): agents inline, keyed by name (a mapping, or a list of entries with
 * a `name` or of one-key mappings), tasks as a list, the crew's other fields beside them.
 */
export function inlineDefinition(parsed: Parsed, nameHint: string, findings: Findings): CrewAIDefinition | undefined {
  const crew = objectAt(parsed.value, parsed.file, findings);
  if (!crew) return undefined;
  const origin: Origin = { file: parsed.file, path: "" };
  const { agents: agentsValue, tasks: taskList, ...crewFields } = crew;
  const agents: CrewAIAgent[] = [];
  const problemsBefore = findings.problems.length;
  const add = (name: string, value: unknown, at: Origin) => {
    const fields = objectAt(value, fieldAt(at), findings);
    if (fields) agents.push({ name, fields, origin: at });
  };
  if (Array.isArray(agentsValue)) {
    for (const [i, item] of agentsValue.entries()) {
      const at = inside(inside(origin, "agents"), i);
      const entry = objectAt(item, fieldAt(at), findings);
      if (!entry) continue;
      if ("name" in entry) {
        const { name, ...fields } = entry;
        if (typeof name !== "string" || !name) findings.problem(fieldAt(at, "name"), "must be a non-empty string");
        else add(name, fields, at);
      } else if (Object.keys(entry).length === 1) {
        const [name, fields] = Object.entries(entry)[0]!;
        add(name, fields, inside(at, name));
      } else {
        findings.problem(fieldAt(at), "must have a name, or be a mapping of one agent name to its fields");
      }
    }
  } else if (agentsValue !== null && typeof agentsValue === "object") {
    for (const [name, value] of Object.entries(agentsValue)) add(name, value, inside(inside(origin, "agents"), name));
  } else {
    findings.problem(fieldAt(origin, "agents"), "must be the crew's agents, keyed by name");
  }
  if (!agents.length && findings.problems.length === problemsBefore) {
    findings.problem(fieldAt(origin, "agents"), "defines no agent");
  }
  const tasks = taskListOf(taskList, origin, findings);
  return {
    crew: { fields: crewFields, origin },
    agents,
    tasks,
    nameHint,
    shape: "inline",
  };
}

function taskListOf(value: unknown, origin: Origin, findings: Findings): CrewAITask[] {
  if (!Array.isArray(value) || !value.length) {
    findings.problem(fieldAt(origin, "tasks"), "must be a non-empty list of tasks");
    return [];
  }
  const tasks: CrewAITask[] = [];
  for (const [i, item] of value.entries()) {
    const at = inside(inside(origin, "tasks"), i);
    const fields = objectAt(item, fieldAt(at), findings);
    if (fields) tasks.push({ fields, origin: at });
  }
  return tasks;
}
