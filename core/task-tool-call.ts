import { z } from "zod";

/**
 * A task that calls one tool of its agent directly — no model, no prompt: the runner opens the agent's tools, makes
 * the one call with the given arguments, and the tool's result is the task's output. A flow's `call: tool` method runs
 * as a crew of one such task (core/flow/tool-calls.ts), so its tool meets the outbound URL policy, the crew's allowed
 * hosts and the execution's app credential exactly as an agent's call would.
 */

/** The most characters of the arguments' text, as a tool call's input is bounded (runner/tool-limits.ts). */
export const MAX_TOOL_CALL_ARGUMENTS_CHARS = 64 * 1024;

export const taskToolCall = z.object({
  tool: z
    .string()
    .min(1)
    .max(128)
    .describe(
      "The tool, by the name its agent offers it: http_request, an MCP tool's name, an app action as app__action",
    ),
  arguments: z
    .string()
    .max(MAX_TOOL_CALL_ARGUMENTS_CHARS)
    .default("{}")
    .describe("The call's arguments: a JSON object, once the task's {placeholders} are filled in"),
});
export type TaskToolCall = z.infer<typeof taskToolCall>;

/** The field a Crew's task (and its assignment) gains. */
export const taskToolCallFields = {
  toolCall: taskToolCall
    .optional()
    .describe(
      "Call this one tool of the task's agent with these arguments instead of asking the model (no LLM is used); the tool's result is the task's output",
    ),
};

/** What is wrong with a task's tool call, given the crew's runtime. */
export function taskToolCallProblems(runtime: string, taskName: string, task: { toolCall?: TaskToolCall }): string[] {
  if (!task.toolCall) return [];
  return runtime === "crewai"
    ? [`task "${taskName}": toolCall is carried out by the kubecrew runtime only: set spec.runtime to kubecrew`]
    : [];
}
