import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_OPERATION_NAME,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from "@opentelemetry/semantic-conventions/incubating";
import type { TaskAssignment, TaskOutcome } from "../core/task-assignment.ts";
import { contextFromTraceparent } from "../platform/telemetry/trace-context.ts";
import { TRACER_NAME } from "../platform/telemetry/tracing.ts";

/**
 * Runs the task inside its span, a child of the `traceparent` the controller (or kubecrew dev) handed the runner, so
 * its LLM and tool calls land in the execution's trace. A failed outcome marks the span as an error.
 */
export function inTaskSpan(
  assignment: TaskAssignment,
  traceparent: string | undefined,
  run: () => Promise<TaskOutcome>,
): Promise<TaskOutcome> {
  const tracer = trace.getTracer(TRACER_NAME);
  const attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    [ATTR_GEN_AI_AGENT_NAME]: assignment.agent.role,
    "kubecrew.crew": assignment.execution.crew,
    "kubecrew.execution": assignment.execution.id,
    "kubecrew.task": assignment.task.name,
    "kubecrew.runtime": assignment.runtime,
  };
  return context.with(contextFromTraceparent(traceparent), () =>
    tracer.startActiveSpan(`task ${assignment.task.name}`, { attributes }, async (span) => {
      try {
        const outcome = await run();
        span.setAttributes({
          "gen_ai.usage.input_tokens": outcome.tokenUsage.inputTokens,
          "gen_ai.usage.output_tokens": outcome.tokenUsage.outputTokens,
        });
        if (outcome.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
        return outcome;
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    }),
  );
}
