import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { contextFromTraceparent, traceparentOf } from "./trace-context.ts";
import { TRACER_NAME } from "./tracing.ts";

/** What a webhook delivery attempt's span says of it: never its URL (whose query may hold a token) or its payload. */
export interface WebhookSpanAttributes {
  /** The CrewExecution's or the flow run's id (kickoff_id). */
  execution: string;
  /** The delivery's key: `task:<task>`, `crew`, `method:<method>#<n>`, `flow`, … */
  hook: string;
  /** The event (`X-Kubecrew-Event`): the span is `webhook <kind>`. */
  kind: string;
  attempt: number;
}

/** The request header a delivery names its span in (W3C trace context), for a receiver to continue the trace. */
export const TRACEPARENT_HEADER = "traceparent";

/**
 * Runs one webhook delivery attempt in a span, a child of the execution's or flow run's trace (its W3C traceparent):
 * the controller's and kubecrew dev's deliveries alike. `send` gets the headers to add to the request: the attempt
 * span's `traceparent`, none when this process does not record the span (tracing off). An attempt that is not
 * delivered (`ok: false`, or thrown) is an error.
 */
export async function inWebhookSpan<T extends { ok: boolean }>(
  traceparent: string | undefined,
  attributes: WebhookSpanAttributes,
  send: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const span = trace.getTracer(TRACER_NAME).startSpan(
    `webhook ${attributes.kind}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "kubecrew.execution": attributes.execution,
        "kubecrew.webhook.hook": attributes.hook,
        "kubecrew.webhook.attempt": attributes.attempt,
      },
    },
    contextFromTraceparent(traceparent),
  );
  try {
    const own = span.isRecording() ? traceparentOf(span) : undefined;
    const outcome = await send(own ? { [TRACEPARENT_HEADER]: own } : {});
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: "not delivered" });
    return outcome;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
    throw error;
  } finally {
    span.end();
  }
}
