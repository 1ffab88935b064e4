import type { TaskAssignment } from "../core/task-assignment.ts";

/** The two messages an agent receives for one task. */
export interface TaskPrompt {
  system: string;
  user: string;
}

/** CrewAI joins the outputs of context tasks with this divider (aggregate_raw_outputs_from_task_outputs). */
export const CONTEXT_DIVIDER = "\n\n----------\n\n";

/**
 * Builds the agent's prompt the way CrewAI words it (its `role_playing`, `expected_output`, `task_with_context` and
 * `task` slices), so a crew moved from CrewAI gets the answers it got there. No tool instructions: tools are offered
 * through the provider's native tool calling (run-task.ts), so the ReAct "Thought:/Action:/Final Answer:" format is
 * left out.
 */
export function buildTaskPrompt(assignment: Pick<TaskAssignment, "agent" | "task" | "context">): TaskPrompt {
  const { agent, task, context } = assignment;
  const roleLine = agent.backstory.trim() ? `You are ${agent.role}. ${agent.backstory}` : `You are ${agent.role}.`;
  const system = `${roleLine}\nYour personal goal is: ${agent.goal}`;

  let taskText =
    `${task.description}\n\nThis is the expected criteria for your final answer: ${task.expectedOutput}\n` +
    "you MUST return the actual complete content as the final answer, not a summary.";
  if (context.length > 0) {
    taskText += `\n\nThis is the context you're working with:\n${context.map((c) => c.output).join(CONTEXT_DIVIDER)}`;
  }
  const user =
    `Current Task: ${taskText}\n\n` +
    "Begin! This is VERY important to you, give your best Final Answer, your job depends on it!";
  return { system, user };
}
