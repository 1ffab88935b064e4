import type { CrewSpec } from "./crew.ts";
import type { ExecutionStatus } from "./execution.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { executionUsage, taskModel, taskUsage, usageStatusOf, type LlmPrices } from "./usage.ts";

/**
 * A finished execution's status with what its LLM calls used: each task's tokens (every attempt) and the execution's,
 * with their cost where every model used has a price. Written once, with the finished phase: no result is added to
 * an execution after it ends, so the figures never change. Tasks without tokens (the mock provider) get no field.
 */
export function withUsage(
  status: ExecutionStatus,
  spec: CrewSpec | undefined,
  resultsByTask: Readonly<Record<string, readonly TaskResultSpec[]>>,
  prices: LlmPrices,
): ExecutionStatus {
  const models = Object.keys(resultsByTask).map((name) => ({ name, model: taskModel(spec, name) }));
  const usage = executionUsage(models, resultsByTask, prices);
  if (!usage) return status;
  return {
    ...status,
    usage: usageStatusOf(usage),
    ...(status.tasks
      ? {
          tasks: status.tasks.map((task) => {
            const used = taskUsage(resultsByTask[task.name] ?? [], taskModel(spec, task.name), prices);
            return used ? { ...task, usage: usageStatusOf(used) } : task;
          }),
        }
      : {}),
  };
}
