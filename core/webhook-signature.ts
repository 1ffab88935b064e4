import { createHmac, randomBytes } from "node:crypto";

/**
 * How every webhook delivery is signed, in a cluster and in `kubecrew dev` alike: `X-Kubecrew-Signature:
 * sha256=<hex HMAC-SHA256 of "<X-Kubecrew-Timestamp>.<body>">` with the crew's signing secret (its own, or one kubecrew
 * generated for it). A receiver recomputes it with the secret and compares in constant time.
 */

export const SIGNATURE_HEADER = "X-Kubecrew-Signature";
export const TIMESTAMP_HEADER = "X-Kubecrew-Timestamp";
export const DELIVERY_HEADER = "X-Kubecrew-Delivery";
export const EVENT_HEADER = "X-Kubecrew-Event";

/** `sha256=<hex>` of HMAC-SHA256(secret, "<timestamp>.<body>"). */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** The timestamp header's value: Unix seconds. */
export const webhookTimestamp = (now: Date) => String(Math.floor(now.getTime() / 1000));

/** A new signing secret for a crew that gives none: 256 random bits as 64 hex characters (easy to paste). */
export const newWebhookSigningSecret = () => randomBytes(32).toString("hex");
