import { z } from "zod";

/**
 * Python references (`module.attribute`, as CrewAI's own declarative crews write them) that a task of the crewai
 * runtime takes from the user's code in the runner image (spec.runner.image): its tools, its output_pydantic model and
 * its guardrail function. The adapter imports them (crewai-adapter/kubecrew_crewai/references.py).
 */

export const MAX_PYTHON_TOOLS = 20;

export const pythonReference = z
  .string()
  .max(256)
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/,
    "must be a Python reference module.attribute (e.g. my_project.tools.custom_tool.MyCustomTool)",
  );

/** A CrewAI project's @CrewBase class, `module:Class`, as the adapter imports it (kubecrew_crewai/project.py). */
export const crewProjectReference = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$/,
    "a Python reference module:Class (e.g. my_project.crew:MyProject)",
  );

export const taskPython = z.object({
  tools: z
    .array(pythonReference)
    .max(MAX_PYTHON_TOOLS)
    .optional()
    .describe("CrewAI tools the task's agent may use: a @tool function, a BaseTool instance or a BaseTool class"),
  outputPydantic: pythonReference
    .optional()
    .describe("A pydantic model the answer must meet (CrewAI's output_pydantic); its JSON is reported as json_dict"),
  guardrail: pythonReference
    .optional()
    .describe("A guardrail function (CrewAI's guardrail): (TaskOutput) -> (bool, Any)"),
});
export type TaskPython = z.infer<typeof taskPython>;

/** The field a Crew's task (and its assignment) gains. */
export const taskPythonFields = {
  python: taskPython
    .optional()
    .describe(
      "Python references (module.attribute) into the runner image's code, imported by the crewai runtime: tools, outputPydantic, guardrail",
    ),
};

/** What is wrong with a task's Python references, given the crew's runtime. */
export function taskPythonProblems(
  runtime: string,
  taskName: string,
  task: { python?: TaskPython | undefined; outputJson?: unknown; guardrail?: unknown; guardrails?: unknown },
): string[] {
  const python = task.python;
  if (!python) return [];
  const at = `task "${taskName}": python`;
  const problems: string[] = [];
  if (runtime !== "crewai") {
    problems.push(
      `${at} names Python code, which only the crewai runtime imports: set spec.runtime to crewai and spec.runner.image to an image holding the code`,
    );
  }
  if (python.outputPydantic !== undefined && task.outputJson !== undefined) {
    problems.push(`${at}.outputPydantic and outputJson are both set: CrewAI takes one structured output, keep one`);
  }
  if (python.guardrail !== undefined && (task.guardrail !== undefined || task.guardrails !== undefined)) {
    problems.push(`${at}.guardrail and guardrail or guardrails are both set: keep the function or the rules`);
  }
  return problems;
}
