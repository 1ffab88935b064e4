import type { ToolExecutionOptions } from "ai";
import { silentLogger } from "../core/logger.ts";
import { needsApproval } from "../core/tool-approval.ts";
import type { TaskAssignment, TaskOutcome } from "../core/task-assignment.ts";
import type { RunTaskDeps } from "./run-task.ts";
import { StepRecorder } from "./step-recorder.ts";
import { openTaskToolset, type TaskToolset, type ToolCallRecord } from "./task-toolset.ts";

const NO_TOKENS = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

/**
 * A task that calls one tool directly (its `toolCall`, core/task-tool-call.ts): no model and no prompt. The agent's
 * tools are opened as for its loop — the same outbound client, allowed hosts, MCP sessions and app credential — and
 * narrowed to the one named; it is called once with the arguments, and its text is the task's output. A tool that
 * fails fails the task, as CrewAI's flow tool action does.
 */
export async function runToolCall(assignment: TaskAssignment, deps: RunTaskDeps): Promise<TaskOutcome> {
  const now = deps.now ?? (() => performance.now());
  const log = (deps.logger ?? silentLogger()).child({ execution: assignment.execution.id, task: assignment.task.name });
  const started = now();
  const recorder = new StepRecorder(deps.onStep);
  const ended = (fields: { output?: string; error?: string }): TaskOutcome => ({
    taskName: assignment.task.name,
    taskIndex: assignment.task.index,
    agent: assignment.agent.role,
    attempt: deps.attempt ?? 1,
    ...fields,
    executionTime: Math.round(now() - started) / 1000,
    tokenUsage: NO_TOKENS,
    ...recorder.summary(),
  });
  const { tool, arguments: text } = assignment.task.toolCall!;
  const args = argumentsOf(text);
  if (typeof args === "string") return ended({ error: `The arguments of ${tool}: ${args}` });
  let toolset: TaskToolset | undefined;
  let call: ToolCallRecord | undefined;
  try {
    toolset = await openTaskToolset(
      { ...assignment, tools: { ...assignment.tools, only: [tool] } },
      {
        fetch: deps.fetch,
        env: deps.env,
        signal: deps.signal,
        logger: log,
        ...(deps.apps ? { apps: deps.apps } : {}),
        onToolCall: (record) => {
          call = record;
          recorder.toolCall(record);
          deps.onToolCall?.(record);
        },
        now,
      },
    );
    const [found, ...others] = Object.values(toolset.tools);
    if (!found?.execute || others.length > 0) {
      return ended({ error: `The agent "${assignment.agent.name}" offers no tool "${tool}" to call` });
    }
    // A call the crew's toolPolicy holds for a person is not made: a direct call has no loop to park.
    const identity = toolset.identify(Object.keys(toolset.tools)[0]!, args);
    if (identity && needsApproval(assignment.tools.requireApproval ?? [], identity)) {
      return ended({ error: `The call of "${tool}" needs a person's approval (toolPolicy.requireApproval): not made` });
    }
    const options: ToolExecutionOptions = {
      toolCallId: `${assignment.task.name}-call`,
      messages: [],
      ...(deps.signal ? { abortSignal: deps.signal } : {}),
    };
    await found.execute(args, options);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    log.warn({ tool, error }, "Tool call failed");
    return ended({ error: error.replace(/\s*\n\s*/g, " ") });
  } finally {
    await toolset?.close();
  }
  const made = call as ToolCallRecord | undefined;
  if (!made) return ended({ error: `The tool "${tool}" was not called` });
  if (made.error !== undefined) return ended({ error: `The tool "${tool}" failed: ${made.error}` });
  log.info({ tool, durationMs: made.durationMs }, "Tool call succeeded");
  return ended({ output: made.output });
}

/** The arguments' JSON object, or what is wrong with the text. */
function argumentsOf(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : "not a JSON object";
}
