import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { afterEach, expect, it } from "vitest";
import { spanIdFor, startSpanWithId } from "./span-ids.ts";
import { startTracing, type Tracing } from "./tracing.ts";

let tracing: Tracing | undefined;
afterEach(async () => {
  await tracing?.stop();
  tracing = undefined;
});

it("gives the span started inside startSpanWithId the id chosen, and only that span", () => {
  tracing = startTracing({ env: {}, serviceName: "x", exporter: new InMemorySpanExporter() });
  const chosen = spanIdFor("an execution");
  const span = startSpanWithId(chosen, () => tracing!.tracer.startSpan("execution"));
  const next = tracing.tracer.startSpan("next");
  expect(span.spanContext().spanId).toBe(chosen);
  expect(next.spanContext().spanId).not.toBe(chosen);
  expect(next.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
  // A start that throws leaves no id behind for the next span.
  expect(() =>
    startSpanWithId(chosen, () => {
      throw new Error("no span");
    }),
  ).toThrow("no span");
  expect(tracing.tracer.startSpan("after").spanContext().spanId).not.toBe(chosen);
});

it("derives one valid span id per name, the same every time", () => {
  expect(spanIdFor("a")).toBe(spanIdFor("a"));
  expect(spanIdFor("a")).not.toBe(spanIdFor("b"));
  expect(spanIdFor("a")).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
});
