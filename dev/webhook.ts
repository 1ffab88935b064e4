import type { JsonObject } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import { OutboundRefusedError } from "../core/outbound/policy.ts";

/**
 * Best-effort webhook delivery for the embedded default: three tries with backoff, never blocking a reconcile.
 * `fetch` is the outbound client's: a URL the policy refuses is reported once and not retried.
 */
export async function deliverWebhook(
  url: string,
  payload: JsonObject,
  deps: { log: Logger; fetch: typeof fetch },
  attempts = 3,
  /** `X-Kubecrew-Delivery` (`<execution id>/<hook>`, the same on a retry) and `X-Kubecrew-Event`, as the controller. */
  identity?: { delivery: string; event: string },
): Promise<boolean> {
  const { log } = deps;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await deps.fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(identity ? { "X-Kubecrew-Delivery": identity.delivery, "X-Kubecrew-Event": identity.event } : {}),
        },
        body: JSON.stringify(payload),
        redirect: "manual",
        signal: AbortSignal.timeout(10_000),
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return true;
      log.warn({ url, status: response.status, attempt }, "Webhook answered an error");
    } catch (err) {
      if (err instanceof OutboundRefusedError) {
        log.warn({ url, reason: err.reason }, `Webhook refused by the outbound URL policy: ${err.message}`);
        return false;
      }
      log.warn({ url, attempt, err: (err as Error).message }, "Webhook delivery failed");
    }
    await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
  }
  return false;
}
