import { placeholderName } from "../crew.ts";
import { isPythonReference, judgeFields } from "./apply-rules.ts";
import type { CrewAITask } from "./definition.ts";
import { NOT_YET, PYTHON, taskFieldRules } from "./field-rules.ts";
import { fieldAt, type Findings } from "./findings.ts";
import { taskChecksFromCrewAI, type TaskChecks } from "./task-checks.ts";
import { taskToolsFromCrewAI } from "./tools.ts";

/** The names CrewAI's JSON loader takes for its own Task class, and for its ConditionalTask, in `type`. */
const TASK_TYPES = ["task", "Task", "crewai.Task", "crewai.task.Task"];
const CONDITIONAL_TASK_TYPES = [
  "conditional",
  "conditional_task",
  "ConditionalTask",
  "crewai.tasks.conditional_task.ConditionalTask",
];

/** A task of the Crew as an import writes it (defaults left to the schema). */
export interface TaskInput extends TaskChecks {
  name: string;
  description: string;
  expectedOutput: string;
  agent?: string;
  context?: string[];
  asyncExecution?: true;
  humanInput?: true;
}

/** A CrewAI task as a Crew's task; `index` names a task written without a name (`task_<n>`). */
export function taskFromCrewAI(
  task: CrewAITask,
  index: number,
  findings: Findings,
  hierarchical = false,
): TaskInput | undefined {
  const before = findings.problems.length;
  const { type, ...fields } = task.fields;
  const at = (field: string) => fieldAt(task.origin, field);
  judgeFields(fields, taskFieldRules, "task", at, findings);

  if (type !== undefined && type !== null && !(typeof type === "string" && TASK_TYPES.includes(type))) {
    findings.problem(
      at("type"),
      typeof type === "string" && CONDITIONAL_TASK_TYPES.includes(type)
        ? NOT_YET("conditional tasks")
        : isPythonReference(type)
          ? `a Python task class: ${PYTHON}`
          : `CrewAI has no task type ${JSON.stringify(type)}`,
    );
  }

  let name = `task_${index + 1}`;
  if (fields.name === undefined || fields.name === null) {
    findings.note(fieldAt(task.origin), `a task without a name: named "${name}" (the task_id of its result)`);
  } else if (typeof fields.name !== "string" || !placeholderName.safeParse(fields.name).success) {
    findings.problem(at("name"), "must match [A-Za-z_][A-Za-z0-9_-]* (at most 63 characters)");
  } else name = fields.name;

  const text = (field: "description" | "expected_output"): string => {
    const value = fields[field];
    if (typeof value === "string" && value.trim()) return value.trimEnd();
    findings.problem(at(field), value === undefined ? "is required" : "must be a non-empty text");
    return "";
  };
  const description = text("description");
  const expectedOutput = text("expected_output");

  let agent: string | undefined;
  if (typeof fields.agent === "string" && fields.agent) agent = fields.agent;
  else if (fields.agent === undefined || fields.agent === null) {
    if (!hierarchical) findings.problem(at("agent"), "is required: every task of a sequential crew names its agent");
  } else findings.problem(at("agent"), "must be an agent's name");

  let context: string[] | undefined;
  if (fields.context !== undefined && fields.context !== null) {
    if (Array.isArray(fields.context) && fields.context.every((c) => typeof c === "string")) {
      context = fields.context as string[];
    } else findings.problem(at("context"), "must be a list of earlier tasks' names");
  }

  const asyncExecution = fields.async_execution;
  if (asyncExecution !== undefined && asyncExecution !== null && typeof asyncExecution !== "boolean") {
    findings.problem(at("async_execution"), "must be true or false");
  }

  const checks = taskChecksFromCrewAI(fields, at, findings);
  const humanInput = fields.human_input;
  if (humanInput !== undefined && humanInput !== null && typeof humanInput !== "boolean") {
    findings.problem(at("human_input"), "must be true or false");
  }
  taskToolsFromCrewAI(fields.tools, at("tools"), findings);

  if (findings.problems.length > before) return undefined;
  return {
    name,
    description,
    expectedOutput,
    ...(agent !== undefined ? { agent } : {}),
    ...(context ? { context } : {}),
    ...(asyncExecution === true ? { asyncExecution: true as const } : {}),
    ...checks,
    ...(humanInput === true ? { humanInput: true as const } : {}),
  };
}
