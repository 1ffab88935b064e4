import { trace, type Span } from "@opentelemetry/api";
import { endExecutionSpan, type FinishedExecution } from "./execution-span.ts";
import { startSpanWithId } from "./span-ids.ts";
import { TRACER_NAME } from "./tracing.ts";

/**
 * A flow run's span, `flow <flow>`: under the flow kickoff's span, the parent of the run's webhook deliveries and of
 * the child executions its methods start, from the kickoff until the run ends (an error when it failed or stopped).
 */

const attributesOf = (run: { flow: string; execution: string }) => ({
  "kubecrew.flow": run.flow,
  "kubecrew.execution": run.execution,
});

/** The span of a run held in one process (kubecrew dev): a child of the active span (the kickoff's). */
export function startFlowRunSpan(run: { flow: string; execution: string }): Span {
  return trace.getTracer(TRACER_NAME).startSpan(`flow ${run.flow}`, { attributes: attributesOf(run) });
}

/** Ends the span with the run's phase (`Succeeded`, `Failed`, `Stopped`), now. */
export function endFlowRunSpan(span: Span, phase: string, error?: string): void {
  endExecutionSpan(span, phase, error);
}

/** A run that has ended, as its span is recorded after the fact: an execution's record, named by its flow. */
export type FinishedFlowRun = Omit<FinishedExecution, "crew"> & { flow: string };

/** Records the run's span at once, with the id given (the controller, whose reconciles come and go). */
export function recordFinishedFlowRunSpan(run: FinishedFlowRun): void {
  const span = startSpanWithId(run.spanId, () =>
    trace
      .getTracer(TRACER_NAME)
      .startSpan(
        `flow ${run.flow}`,
        { startTime: run.startTime, attributes: { ...attributesOf(run), ...run.attributes } },
        run.parent,
      ),
  );
  endExecutionSpan(span, run.phase, run.error, run.endTime);
}
