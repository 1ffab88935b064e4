import type { StatusResponse } from "./api-bodies.ts";
import { isFinished, type ExecutionSpec, type ExecutionStatus } from "./execution.ts";
import { openRequests } from "./human-input.ts";
import { pendingToolCalls } from "./tool-call-requests.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { successfulResult } from "./observed-task.ts";
import { executionUsage, taskModel, taskUsage, type LlmPrices } from "./usage.ts";
import type { CrewSpec } from "./crew.ts";

/**
 * What `/status` adds for operators: a finished execution's token usage (given `prices`, the table, empty or not) and
 * the execution's trace id. Without `prices` (the console's lists, a flow's child runs) no usage is computed.
 */
export interface StatusExtras {
  crewSpec?: CrewSpec;
  prices?: LlmPrices;
  traceId?: string;
}

/**
 * What `GET /status/{id}` answers for an execution: one of the three CrewAI shapes, each with `state`; a running one
 * that waits for a person says what for (`pending_human_input`), once no decision answers it.
 */
export function statusResponse(
  status: ExecutionStatus | undefined,
  resultsByTask: Record<string, TaskResultSpec[]>,
  firstTaskName: string,
  totalTasks: number,
  spec: Pick<ExecutionSpec, "decisions"> = {},
  extras: StatusExtras = {},
): StatusResponse {
  const phase = status?.phase ?? "Pending";
  const executionTime = status?.executionTime ?? 0;
  const crewSpec = extras.crewSpec ?? status?.crewSpec;
  const models = Object.keys(resultsByTask).map((name) => ({ name, model: taskModel(crewSpec, name) }));
  // Additive fields (CrewAI clients ignore them), present only when there is something to say.
  const usage = extras.prices && isFinished(phase) ? executionUsage(models, resultsByTask, extras.prices) : undefined;
  const additive = { ...(usage ? { usage } : {}), ...(extras.traceId ? { trace_id: extras.traceId } : {}) };
  const running = extras.traceId ? { trace_id: extras.traceId } : {};
  if (phase === "Succeeded") {
    const tasks = (status?.tasks ?? []).map((t) => {
      const result = successfulResult({ results: resultsByTask[t.name] ?? [] });
      return {
        task_id: t.name,
        output: result?.output ?? "",
        agent: result?.agent ?? t.agent ?? "",
        execution_time: result?.executionTime ?? t.executionTime ?? 0,
        // The object of a task with outputJson, as CrewAI's TaskOutput names it.
        ...(result?.jsonDict !== undefined ? { json_dict: result.jsonDict } : {}),
        // Extra fields (CrewAI clients ignore them): how many steps the task took and which tools it called.
        ...(result?.stepCount !== undefined ? { steps: result.stepCount, tools_used: result.toolsUsed ?? [] } : {}),
        ...(extras.prices
          ? usageField(taskUsage(resultsByTask[t.name] ?? [], taskModel(crewSpec, t.name), extras.prices))
          : {}),
      };
    });
    return {
      status: "completed",
      state: "SUCCESS",
      result: { output: tasks.at(-1)?.output ?? "", tasks },
      execution_time: executionTime,
      ...additive,
    };
  }
  if (phase === "Failed" || phase === "Stopped") {
    return {
      status: "error",
      state: "FAILED",
      error: status?.error ?? "Execution failed",
      execution_time: executionTime,
      ...additive,
    };
  }
  const pending = openRequests(spec, status).find((r) => r.kind === "taskOutput");
  const held = pendingToolCalls(openRequests(spec, status));
  return {
    status: "running",
    state: "RUNNING",
    current_task: status?.currentTask ?? firstTaskName,
    progress: {
      completed_tasks: status?.progress?.completedTasks ?? 0,
      total_tasks: status?.progress?.totalTasks ?? totalTasks,
    },
    ...(held.length > 0 ? { pending_tool_calls: held } : {}),
    ...(pending
      ? {
          pending_human_input: {
            task_id: pending.task,
            output: successfulResult({ results: resultsByTask[pending.task] ?? [] }, pending.revision)?.output ?? "",
            requested_at: pending.requestedAt,
          },
        }
      : {}),
    ...running,
  };
}

const usageField = <T>(usage: T | undefined) => (usage ? { usage } : {});
