import type { JsonObject } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import { OutboundRefusedError } from "../core/outbound/policy.ts";
import { inWebhookSpan } from "../platform/telemetry/webhook-span.ts";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signWebhook,
  TIMESTAMP_HEADER,
  webhookTimestamp,
} from "../core/webhook-signature.ts";

/**
 * Where a delivery's attempts are traced: the execution's span or the flow run's trace (its W3C traceparent), the
 * execution (or run) and the hook.
 */
export interface WebhookTrace {
  traceparent: string | undefined;
  execution: string;
  hook: string;
}

/**
 * Best-effort webhook delivery for the embedded default: three tries with backoff, never blocking a reconcile. Signed
 * as the controller signs (a fresh timestamp each try) with the crew's secret. `fetch` is the outbound client's: a URL
 * the policy refuses is reported once and not retried. With `trace`, each try is a span of the execution's trace, as
 * the controller's are, and its request carries that span's `traceparent` (tracing on).
 */
export async function deliverWebhook(
  url: string,
  payload: JsonObject,
  deps: { log: Logger; fetch: typeof fetch; now?: () => Date },
  /** The crew's signing secret. */
  secret: string,
  /**
   * `X-Kubecrew-Delivery` (`<execution id>/<hook>`, the same on a retry) and `X-Kubecrew-Event`, as the controller;
   * the Authorization header a human-input webhook carries (never logged).
   */
  identity: { delivery: string; event: string; authorization?: string; trace?: WebhookTrace },
  attempts = 3,
): Promise<boolean> {
  const { log } = deps;
  // A receiver's URL may carry its token in the query: the lines name the origin and path only.
  const shown = withoutQuery(url);
  const body = JSON.stringify(payload);
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const timestamp = webhookTimestamp(deps.now?.() ?? new Date());
    const send = async (traceHeaders: Record<string, string> = {}) => {
      const response = await deps.fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
          [DELIVERY_HEADER]: identity.delivery,
          [EVENT_HEADER]: identity.event,
          ...(identity.authorization ? { authorization: identity.authorization } : {}),
          ...traceHeaders,
        },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel().catch(() => undefined);
      return { ok: response.ok, status: response.status };
    };
    const { trace } = identity;
    try {
      const answer = trace
        ? await inWebhookSpan(trace.traceparent, { ...trace, kind: identity.event, attempt }, send)
        : await send();
      if (answer.ok) return true;
      log.warn({ url: shown, status: answer.status, attempt }, "Webhook answered an error");
    } catch (err) {
      if (err instanceof OutboundRefusedError) {
        log.warn({ url: shown, reason: err.reason }, `Webhook refused by the outbound URL policy: ${err.message}`);
        return false;
      }
      log.warn({ url: shown, attempt, err: (err as Error).message }, "Webhook delivery failed");
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
  }
  return false;
}

function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(not a URL)";
  }
}
