import type { TaskAssignment } from "../core/task-assignment.ts";
import { structuredOutputInstruction } from "./structured-output.ts";

/** The two messages an agent receives for one task. */
export interface TaskPrompt {
  system: string;
  user: string;
}

/** The first line of the task message starts with this, then the task's description (runner/mock-model.ts reads it). */
export const TASK_LABEL = "Task: ";

/**
 * The `kubecrew` runtime's prompt for one task, in its own words: the system message says who the agent is (role,
 * goal, background), the task message what to do, what the answer must be, what the earlier tasks it builds on
 * produced (with what a person who approved one said of it) and, for a revision a person asked for, the earlier answer
 * and their request. The crew's inputs are already filled into these texts (core/assignment.ts). Tools are offered
 * through the provider's native tool calling (run-task.ts), so there are no tool instructions here. CrewAI's own
 * prompts belong to CrewAI and run in the `crewai` runtime.
 */
export function buildTaskPrompt(assignment: Pick<TaskAssignment, "agent" | "task" | "context">): TaskPrompt {
  const { agent, task, context } = assignment;
  const profile = [`Role: ${agent.role}`, `Goal: ${agent.goal}`];
  if (agent.backstory.trim()) profile.push(`Background: ${agent.backstory}`);
  const system =
    `${profile.join("\n")}\n\n` +
    "You are one agent of a crew that carries out its tasks in turn. Act in the role above, work towards its goal, " +
    "and draw on its background.";

  const parts = [`${TASK_LABEL}${task.description}`, `Expected output: ${task.expectedOutput}`];
  if (context.length > 0) {
    const results = context.map(
      (c) =>
        `--- Result of "${c.task}" ---\n${c.output}` +
        (c.note ? `\n(The person who approved this result added: ${c.note})` : ""),
    );
    parts.push(`Results of earlier tasks to build on:\n\n${results.join("\n\n")}`);
  }
  if (task.review) parts.push(reviewSection(task.review));
  parts.push(
    "Reply with the finished work itself, in full and in the form the expected output describes, rather than an " +
      "outline or a description of it.",
  );
  if (task.outputJson) parts.push(structuredOutputInstruction(task.outputJson));
  return { system, user: parts.join("\n\n") };
}

/**
 * A revision (a humanInput task whose answer a person sent back): the answer they saw and what they asked for, so the
 * agent improves on it instead of starting over.
 */
function reviewSection(review: NonNullable<TaskAssignment["task"]["review"]>): string {
  const feedback = review.feedback.trim() || "(no particular change named: write a better answer)";
  return (
    "A person reviewed your earlier answer to this task and asked for a revision.\n\n" +
    `--- Your earlier answer ---\n${review.previousOutput}\n\n` +
    `--- What the person asked for ---\n${feedback}\n\n` +
    "Write the answer again with their request met; keep what they did not ask you to change."
  );
}
