import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";

export interface SpanRecorder {
  /** Every span ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** Unregisters the provider (the API's no-op tracer again). */
  stop(): Promise<void>;
}

/**
 * The OpenTelemetry SDK registered globally, as startTracing does, with an in-memory exporter fed at each span's end
 * (a simple processor: no batching to wait for), so a unit test reads the spans the code under test made.
 */
export function recordSpans(): SpanRecorder {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    stop: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** A span's name, attributes, events and status as one text, to check that nothing in it holds a secret. */
export function spanText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })),
  );
}
