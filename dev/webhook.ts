import type { JsonObject } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";

/** Best-effort webhook delivery for the embedded default: three tries with backoff, never blocking a reconcile. */
export async function deliverWebhook(url: string, payload: JsonObject, log: Logger, attempts = 3): Promise<boolean> {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(10_000),
      });
      if (response.ok) return true;
      log.warn({ url, status: response.status, attempt }, "Webhook answered an error");
    } catch (err) {
      log.warn({ url, attempt, err: (err as Error).message }, "Webhook delivery failed");
    }
    await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
  }
  return false;
}
