import { SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { TRACER_NAME } from "./tracing.ts";

/** Runs `work` inside a new active span that ends with it; a thrown error marks the span (its name only). */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
      throw error;
    } finally {
      span.end();
    }
  });
}
