import { SpanStatusCode, trace, type Span } from "@opentelemetry/api";
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

/** Ends the span with the execution's outcome (a failed or stopped execution is an error). */
export function endExecutionSpan(span: Span, phase: string, error?: string): void {
  span.setAttribute("kubecrew.phase", phase);
  if (phase !== "Succeeded") span.setStatus({ code: SpanStatusCode.ERROR, ...(error ? { message: error } : {}) });
  span.end();
}

/** The environment a task's runner continues the trace in: its TRACEPARENT, nothing when tracing is off. */
export function traceEnv(span: Span | undefined): Record<string, string> {
  const traceparent = span && traceparentOf(span);
  return traceparent ? { [TRACEPARENT_ENV]: traceparent } : {};
}
