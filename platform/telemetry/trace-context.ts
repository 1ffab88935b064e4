import { context, ROOT_CONTEXT, trace, type Context, type Span } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

const w3c = new W3CTraceContextPropagator();

/** The environment variable a parent process hands its trace context to a child in (W3C `traceparent`). */
export const TRACEPARENT_ENV = "TRACEPARENT";

/** The context whose parent is the W3C `traceparent` given; the root context when there is none or it is malformed. */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return w3c.extract(ROOT_CONTEXT, { traceparent }, { get: (c, k) => c[k], keys: (c) => Object.keys(c) });
}

/** The W3C `traceparent` of a span (or of the active one): undefined when it is not sampled or tracing is off. */
export function traceparentOf(span: Span | undefined = trace.getActiveSpan()): string | undefined {
  if (!span || !span.spanContext().traceFlags) return undefined;
  const carrier: Record<string, string> = {};
  w3c.inject(trace.setSpan(context.active(), span), carrier, { set: (c, k, v) => (c[k] = v) });
  return carrier.traceparent;
}

/** The trace id a W3C `traceparent` names (32 hex digits), undefined when it is malformed. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return trace.getSpanContext(contextFromTraceparent(traceparent))?.traceId;
}

/** `{traceparent}` when there is one, else nothing: to spread into an object that carries it only when traced. */
export const traceparentField = (traceparent: string | undefined): { traceparent?: string } =>
  traceparent ? { traceparent } : {};
