import { z } from "zod";
import { agent, crewProcess, crewRuntime, MAX_AGENTS } from "./crew.ts";
import { jsonObject } from "./json.ts";
import { NO_TASK_TOOLS, taskTools } from "./task-tools.ts";
import { MAX_STORED_STEPS, taskStep } from "./task-step.ts";
import { taskGuardrailFields } from "./task-guardrails.ts";
import { crewProjectReference, taskPythonFields } from "./python-references.ts";
import { taskToolCallFields } from "./task-tool-call.ts";
import { loopResume, parkedLoop } from "./parked-loop.ts";

/**
 * A Crew of the crewai runtime that CrewAI runs whole (its process hierarchical, or agents with allowDelegation:
 * core/whole-project.ts), declared in the Crew rather than in a project: its process and its tasks, inputs filled in.
 * Its agents are the assignment's `coworkers`; a hierarchical crew's manager is the assignment's `agent`.
 */
export const declaredCrew = z.object({
  process: crewProcess,
  manager: z
    .enum(["llm", "agent"])
    .optional()
    .describe("A hierarchical crew's manager: CrewAI's own around managerLlm, or the crew's managerAgent"),
  tasks: z
    .array(
      z.object({
        name: z.string(),
        description: z.string(),
        expectedOutput: z.string(),
        agent: z.string().optional(),
        context: z.array(z.string()).optional(),
        asyncExecution: z.boolean().optional(),
        tools: z
          .array(z.string())
          .optional()
          .describe("The task's `tools`: the only tools of its agent's it may use (CrewAI's Task tools)"),
        ...taskGuardrailFields,
        ...taskPythonFields,
      }),
    )
    .min(1),
});
export type DeclaredCrew = z.infer<typeof declaredCrew>;

/** What a whole run is told besides task 0's assignment: the project's class or the declared crew, and its tasks. */
export const projectAssignment = z.object({
  crew: crewProjectReference.optional(),
  declared: declaredCrew.optional().describe("The Crew's own definition, when no project class is named"),
  tasks: z.array(z.object({ name: z.string(), index: z.number().int().min(0) })).min(1),
});
export type ProjectAssignment = z.infer<typeof projectAssignment>;

/**
 * Everything one runner needs to carry out one task, with every placeholder already interpolated.
 * The controller writes it into the task's ConfigMap; the embedded mode hands it to a child process.
 */
export const taskAssignment = z.object({
  execution: z.object({
    id: z.string().describe("The kickoff_id (the CrewExecution's name)"),
    crew: z.string(),
    namespace: z.string().optional(),
    uid: z.string().optional().describe("CrewExecution uid, for the result's ownerReference"),
  }),
  task: z.object({
    index: z.number().int().min(0),
    name: z.string(),
    description: z.string(),
    expectedOutput: z.string(),
    revision: z.number().int().min(0).optional().describe("n for the task's nth revision (absent: its first answer)"),
    review: z
      .object({ previousOutput: z.string(), feedback: z.string() })
      .optional()
      .describe("A revision: the answer a person sent back, and what they asked for"),
    resume: loopResume
      .optional()
      .describe("A run after held tool calls were decided: the parked conversation goes on with the answers"),
    // As the crew gives them: the crewai runtime hands them to CrewAI (its adapter's guardrails.py), the kubecrew
    // runtime turns them into checks (runner/guardrails.ts).
    ...taskGuardrailFields,
    ...taskPythonFields,
    ...taskToolCallFields,
  }),
  agent: agent,
  context: z
    .array(
      z.object({
        task: z.string(),
        output: z.string(),
        note: z.string().optional().describe("What the person who approved this output said about it"),
      }),
    )
    .default([]),
  inputs: jsonObject.default({}),
  tools: taskTools.default(NO_TASK_TOOLS).describe("The MCP servers and host policy the task's tools use"),
  runtime: crewRuntime.default("kubecrew").describe("What runs the task: the runner itself, or CrewAI in Python"),
  project: projectAssignment
    .optional()
    .describe(
      "The crew run whole by this run (spec.runner.crew, or a crewai crew CrewAI runs whole); every task's result is reported",
    ),
  coworkers: z
    .array(z.object({ agent, tools: taskTools.default(NO_TASK_TOOLS) }))
    .max(MAX_AGENTS)
    .optional()
    .describe(
      "The agents the task's agent may delegate to (a hierarchical crew's manager, or an agent with allowDelegation), each with its tools; their work runs in the task's pod",
    ),
});
export type TaskAssignment = z.infer<typeof taskAssignment>;

export const tokenUsage = z.object({
  inputTokens: z.number().int().min(0).default(0),
  outputTokens: z.number().int().min(0).default(0),
  totalTokens: z.number().int().min(0).default(0),
});
export type TokenUsage = z.infer<typeof tokenUsage>;

/** Largest task output kept whole; a larger one fails the task instead of being cut. */
export const MAX_TASK_OUTPUT_BYTES = 1024 * 1024;

/** The steps of a task (bounded, see task-step.ts), on outcomes and results alike. */
export const stepFields = {
  steps: z
    .array(taskStep)
    .max(MAX_STORED_STEPS)
    .optional()
    .describe("The first steps (LLM turns and tool calls); the oldest texts summarised (see task-step.ts)"),
  stepCount: z.number().int().min(0).optional().describe("Every step the task took, kept or not"),
  toolsUsed: z.array(z.string()).max(200).optional().describe("The tools called, each once, in first-call order"),
};

/** What a runner reports for one task: an output, or the error that ended it. */
export const taskOutcome = z.object({
  taskName: z.string(),
  taskIndex: z.number().int().min(0),
  agent: z.string().describe("The agent's role, as CrewAI reports it"),
  output: z.string().optional(),
  jsonDict: jsonObject.optional().describe("The answer's object, for a task with outputJson (CrewAI's json_dict)"),
  error: z.string().optional(),
  parked: parkedLoop
    .optional()
    .describe("Neither answer nor error: the loop stopped before tool calls that need a person's approval"),
  executionTime: z.number().min(0).describe("Seconds"),
  tokenUsage: tokenUsage.default({ inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
  model: z.string().optional(),
  attempt: z.number().int().min(1).default(1),
  ...stepFields,
});
export type TaskOutcome = z.infer<typeof taskOutcome>;
