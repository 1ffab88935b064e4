import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { contextFromTraceparent } from "./trace-context.ts";
import { TRACER_NAME } from "./tracing.ts";

/** What a webhook delivery attempt's span says of it: never its URL (whose query may hold a token) or its payload. */
export interface WebhookSpanAttributes {
  execution: string;
  /** The delivery's key: `task:<task>`, `crew`, … */
  hook: string;
  /** The event (`X-Kubecrew-Event`): the span is `webhook <kind>`. */
  kind: string;
  attempt: number;
}

/**
 * Runs one webhook delivery attempt in a span, a child of the execution's trace (its W3C traceparent): the controller's
 * and kubecrew dev's deliveries alike. An attempt that is not delivered (`ok: false`, or thrown) is an error.
 */
export async function inWebhookSpan<T extends { ok: boolean }>(
  traceparent: string | undefined,
  attributes: WebhookSpanAttributes,
  send: () => Promise<T>,
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
    const outcome = await send();
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: "not delivered" });
    return outcome;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
    throw error;
  } finally {
    span.end();
  }
}
