import { SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import { startSpanWithId } from "./span-ids.ts";
import { TRACEPARENT_ENV, traceparentOf } from "./trace-context.ts";
import { TRACER_NAME } from "./tracing.ts";

/**
 * An execution's span while it runs in one process (kubecrew dev): a child of the active span (the kickoff request's),
 * the parent of its tasks' spans. A no-op span when tracing is off.
 */
export function startExecutionSpan(attributes: { crew: string; execution: string }): Span {
  return trace.getTracer(TRACER_NAME).startSpan(`execution ${attributes.crew}`, {
    attributes: { "kubecrew.crew": attributes.crew, "kubecrew.execution": attributes.execution },
  });
}

/** Ends the span with the execution's outcome (a failed or stopped execution is an error), now or at `endTime`. */
export function endExecutionSpan(span: Span, phase: string, error?: string, endTime?: Date): void {
  span.setAttribute("kubecrew.phase", phase);
  if (phase !== "Succeeded") span.setStatus({ code: SpanStatusCode.ERROR, ...(error ? { message: error } : {}) });
  span.end(endTime);
}

/** A finished execution, as the span of it is recorded after the fact. */
export interface FinishedExecution {
  crew: string;
  execution: string;
  /** The span's id, chosen before: its children named it as their parent while the execution ran. */
  spanId: string;
  /** The context of the span's parent (the kickoff's). */
  parent: Context;
  startTime: Date;
  endTime: Date;
  phase: string;
  error?: string;
  /** More attributes (e.g. the namespace). */
  attributes?: Attributes;
}

/**
 * Records an execution's span at once, from its start to its end, with the id given (a process that did not see it
 * start: the controller on a cluster, whose reconciles come and go). A no-op when tracing is off.
 */
export function recordFinishedExecutionSpan(finished: FinishedExecution): void {
  const { crew, execution } = finished;
  const span = startSpanWithId(finished.spanId, () =>
    trace.getTracer(TRACER_NAME).startSpan(
      `execution ${crew}`,
      {
        startTime: finished.startTime,
        attributes: { "kubecrew.crew": crew, "kubecrew.execution": execution, ...finished.attributes },
      },
      finished.parent,
    ),
  );
  endExecutionSpan(span, finished.phase, finished.error, finished.endTime);
}

/** The environment a task's runner continues the trace in: its TRACEPARENT, nothing when tracing is off. */
export function traceEnv(span: Span | undefined): Record<string, string> {
  const traceparent = span && traceparentOf(span);
  return traceparent ? { [TRACEPARENT_ENV]: traceparent } : {};
}
