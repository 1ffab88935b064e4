import type { CrewSpec, Task } from "./crew.ts";
import { coworkersOf, agentFor } from "./crew-process.ts";
import type { DecideInput } from "./decision.ts";
import { decisionOn, lastSentBack, taskRevision, toolCallDecisions } from "./human-input.ts";
import { interpolate } from "./inputs.ts";
import { parkedResult, successfulResult } from "./observed-task.ts";
import type { LoopResume } from "./parked-loop.ts";
import type { TaskAssignment } from "./task-assignment.ts";
import { contextTaskNames } from "./task-graph.ts";
import type { TaskGuardrails } from "./task-guardrails.ts";
import { resolveTaskTools } from "./task-tools.ts";

/** A task's structured output and guardrails as its assignment carries them: only those it has. */
function taskGuardrails(task: Task): TaskGuardrails {
  return {
    ...(task.outputJson !== undefined ? { outputJson: task.outputJson } : {}),
    ...(task.guardrail !== undefined ? { guardrail: task.guardrail } : {}),
    ...(task.guardrails !== undefined ? { guardrails: task.guardrails } : {}),
    ...(task.guardrailMaxRetries !== undefined ? { guardrailMaxRetries: task.guardrailMaxRetries } : {}),
  };
}

/** What the runner of task `index` is given: the task and its agent with the inputs filled in, and its context. */
export function buildAssignment(input: DecideInput, spec: CrewSpec, index: number): TaskAssignment {
  const task = spec.tasks[index]!;
  const inputs = input.execution.spec.inputs;
  const agent = agentFor(spec, task.name);
  const contextNames = contextTaskNames(spec, index);
  const coworkers = coworkersOf(spec, index).map((coworker) => ({
    agent: {
      ...coworker,
      role: interpolate(coworker.role, inputs),
      goal: interpolate(coworker.goal, inputs),
      backstory: interpolate(coworker.backstory, inputs),
    },
    tools: resolveTaskTools(spec, coworker, { ...task, tools: undefined }),
  }));
  const revision = taskRevision(input.execution, task.name);
  const review = reviewOf(input, task.name);
  const resume = revision > 0 ? resumeOf(input, task.name, revision - 1) : undefined;
  return {
    execution: {
      id: input.execution.name,
      crew: input.execution.spec.crewRef.name,
      ...(input.execution.namespace ? { namespace: input.execution.namespace } : {}),
      ...(input.execution.uid ? { uid: input.execution.uid } : {}),
    },
    task: {
      index,
      name: task.name,
      description: interpolate(task.description, inputs),
      expectedOutput: interpolate(task.expectedOutput, inputs),
      ...(revision > 0 ? { revision } : {}),
      ...(review ? { review } : {}),
      ...(resume ? { resume } : {}),
      ...taskGuardrails(task),
      ...(task.python ? { python: task.python } : {}),
      // The arguments' text takes the inputs as the description does (a flow's tool method: its JSON whole).
      ...(task.toolCall
        ? { toolCall: { ...task.toolCall, arguments: interpolate(task.toolCall.arguments, inputs) } }
        : {}),
    },
    agent: {
      ...agent,
      role: interpolate(agent.role, inputs),
      goal: interpolate(agent.goal, inputs),
      backstory: interpolate(agent.backstory, inputs),
    },
    context: contextNames.map((name) => contextEntry(input, name)),
    inputs,
    tools: resolveTaskTools(spec, agent, task),
    runtime: spec.runtime,
    ...(coworkers.length > 0 ? { coworkers } : {}),
  };
}

/** The last answer of a task that a person sent back: what it said, and what they asked for instead. */
function reviewOf(input: DecideInput, task: string) {
  const sentBack = lastSentBack(input.execution.spec, task);
  if (!sentBack) return undefined;
  const previousOutput = successfulResult(input.observed[task], sentBack.revision)?.output ?? "";
  return { previousOutput, feedback: sentBack.feedback };
}

/** Run `revision` of a task parked on held tool calls that people then decided on: its loop goes on with the answers. */
function resumeOf(input: DecideInput, task: string, revision: number): LoopResume | undefined {
  const parked = parkedResult(input.observed[task], revision)?.parked;
  if (!parked) return undefined;
  const answers = toolCallDecisions(input.execution.spec, task, revision).map((d) => ({
    toolCallId: d.toolCallId ?? "",
    approve: d.approve,
    by: d.decidedBy.subject,
    feedback: d.feedback,
  }));
  return { ...parked, answers };
}

/** An earlier task's output as context, with what the person who approved it said about it (if they said anything). */
function contextEntry(input: DecideInput, task: string) {
  const output = successfulResult(input.observed[task])?.output ?? "";
  const approval = decisionOn(input.execution.spec, task, taskRevision(input.execution, task));
  const note = approval?.approve ? approval.feedback.trim() : "";
  return { task, output, ...(note ? { note } : {}) };
}
