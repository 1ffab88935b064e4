import type { WebhookKind } from "../core/decision.ts";
import type { JsonObject } from "../core/json.ts";
import type { CredentialsRef } from "./human-input-credentials.ts";
import type { Logger } from "../core/logger.ts";
import { OutboundRefusedError } from "../core/outbound/policy.ts";
import { traceIdOf } from "../platform/telemetry/trace-context.ts";
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
 * Webhook delivery, off the reconcile path: a reconcile only enqueues; workers POST with an HMAC-SHA256 signature
 * over `<timestamp>.<body>` with the crew's secret (core/webhook-signature.ts; every delivery is signed) and retry with
 * exponential backoff. Each delivery has a stable id (the execution's uid + the hook), sent as `X-Kubecrew-Delivery`: a delivery enqueued twice (a replayed reconcile) is sent once per process;
 * the reconciler records finished deliveries on the execution so a restarted controller does not send them again.
 * Delivery is at least once: a POST the receiver answered but the controller died before recording (a SIGKILL between
 * the 2xx and the record), or whose answer was lost, is sent again after a restart — with the same delivery id, so a
 * receiver that keeps the ids it has seen processes each delivery exactly once. Recording before sending would not
 * help: a controller that dies after the record and before the POST would lose the delivery (at most once).
 */

export interface WebhookDelivery {
  /** `task:<task name>`, `step:<task name>:<attempt>:<index>`, `human-input:<task name>` or `crew` (see due-webhooks.ts). */
  hook: string;
  kind: WebhookKind;
  namespace: string;
  execution: string;
  /** The CrewExecution's (or FlowExecution's) metadata.uid: unique to this run, also against a later run of the same name. */
  executionUid: string;
  /** The crew whose secret signs it (a crew execution's hooks). */
  crew: string;
  /** A flow run's hook (`execution` names a FlowExecution): signed with the flow's secret, recorded on the run. */
  flow?: string;
  url: string;
  payload: JsonObject;
  /** A human-input webhook's credentials (the kickoff's): the Secret holding its Authorization header. */
  authorization?: CredentialsRef;
  /** The execution's (or flow run's) trace, its kickoff's traceparent: each attempt is a span in it. */
  traceparent?: string;
}

export type DeliveryResult = "delivered" | "failed";

export interface WebhookDispatcherOptions {
  log: Logger;
  /** The crew's signing secret; throws while there is none to read (the attempt fails and is retried). */
  secretFor: (namespace: string, crew: string) => Promise<string>;
  /** The flow's signing secret (a flow run's hooks); throws while there is none to read. */
  flowSecretFor?: (namespace: string, flow: string) => Promise<string>;
  /** A delivery's Authorization header from its credentials' Secret; throws while there is none to read. */
  authorizationFor?: (namespace: string, ref: CredentialsRef) => Promise<string>;
  /** Called once per delivery when it ends (sent, or given up). */
  onFinished: (delivery: WebhookDelivery, result: DeliveryResult, detail: string) => Promise<void> | void;
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  timeoutMs?: number;
  concurrency?: number;
  now?: () => Date;
  /** The outbound client's fetch (the outbound URL policy); the global fetch only in unit tests. */
  fetch?: typeof fetch;
  /** Sharded: whether this replica still owns the delivery's execution; a delivery whose shard was lost is dropped
   * before its next attempt (the shard's new holder sends what is not recorded). */
  owns?: (delivery: WebhookDelivery) => boolean;
}

/** A delivery's id, the same on every resend by any controller: `<execution uid>/<hook>`. */
export const deliveryId = (d: Pick<WebhookDelivery, "executionUid" | "hook">) => `${d.executionUid}/${d.hook}`;

interface Pending {
  delivery: WebhookDelivery;
  attempt: number;
  dueAt: number;
}

export class WebhookDispatcher {
  private readonly opts: WebhookDispatcherOptions;
  private readonly known = new Set<string>();
  private readonly ready: Pending[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private running = 0;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];
  delivered = 0;
  failedAttempts = 0;

  constructor(opts: WebhookDispatcherOptions) {
    this.opts = opts;
  }

  /** Queues a delivery unless this process already has it; true when it was queued now. */
  enqueue(delivery: WebhookDelivery): boolean {
    const id = deliveryId(delivery);
    if (this.stopped || this.known.has(id)) return false;
    this.known.add(id);
    this.ready.push({ delivery, attempt: 1, dueAt: Date.now() });
    this.pump();
    return true;
  }

  has(id: string): boolean {
    return this.known.has(id);
  }

  get pending(): number {
    return this.ready.length + this.timers.size + this.running;
  }

  /** Resolves when nothing is queued, waiting or being sent. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.ready.length = 0;
  }

  private pump(): void {
    const concurrency = this.opts.concurrency ?? 8;
    while (!this.stopped && this.running < concurrency && this.ready.length > 0) {
      const next = this.ready.shift()!;
      this.running++;
      void this.attempt(next).finally(() => {
        this.running--;
        this.pump();
        if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
  }

  private async attempt(p: Pending): Promise<void> {
    const { delivery } = p;
    if (this.opts.owns && !this.opts.owns(delivery)) {
      this.known.delete(deliveryId(delivery));
      return;
    }
    const maxAttempts = this.opts.maxAttempts ?? 8;
    const log = this.logFor(delivery);
    let outcome: { ok: true } | { ok: false; retry: boolean; detail: string };
    try {
      const attributes = {
        execution: delivery.execution,
        hook: delivery.hook,
        kind: delivery.kind,
        attempt: p.attempt,
      };
      outcome = await inWebhookSpan(delivery.traceparent, attributes, (trace) => this.send(delivery, trace));
    } catch (err) {
      // A URL the outbound policy refuses stays refused: report it once instead of retrying.
      const refused = err instanceof OutboundRefusedError;
      outcome = { ok: false, retry: !refused, detail: String((err as Error).message ?? err) };
    }
    if (this.stopped) return;
    if (outcome.ok) {
      this.delivered++;
      log.info({ attempt: p.attempt }, "Webhook delivered");
      await this.finish(delivery, "delivered", `delivered on attempt ${p.attempt}`);
      return;
    }
    this.failedAttempts++;
    if (!outcome.retry || p.attempt >= maxAttempts) {
      log.warn({ attempt: p.attempt, detail: outcome.detail }, "Webhook delivery abandoned");
      await this.finish(delivery, "failed", outcome.detail);
      return;
    }
    const initial = this.opts.initialDelayMs ?? 1000;
    const delay = Math.min(initial * 2 ** (p.attempt - 1), this.opts.maxDelayMs ?? 60_000);
    log.warn({ attempt: p.attempt, detail: outcome.detail, retryInMs: delay }, "Webhook delivery failed; retrying");
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.ready.push({ delivery, attempt: p.attempt + 1, dueAt: Date.now() });
      this.pump();
    }, delay);
    this.timers.add(timer);
  }

  /** A delivery's lines name its execution, its hook and, like the rest of the execution's lines, its trace. */
  private logFor(delivery: WebhookDelivery): Logger {
    const traceId = traceIdOf(delivery.traceparent);
    return this.opts.log.child({
      execution: delivery.execution,
      hook: delivery.hook,
      ...(traceId ? { trace_id: traceId } : {}),
    });
  }

  private async finish(delivery: WebhookDelivery, result: DeliveryResult, detail: string): Promise<void> {
    try {
      await this.opts.onFinished(delivery, result, detail);
    } catch (err) {
      this.logFor(delivery).warn({ err: String(err) }, "Cannot record webhook delivery");
    }
  }

  private flowSecret(namespace: string, flow: string): Promise<string> {
    if (!this.opts.flowSecretFor) throw new Error("no signing secret for flow webhooks");
    return this.opts.flowSecretFor(namespace, flow);
  }

  /** `trace`: the attempt span's `traceparent` header (tracing on). */
  private async send(
    delivery: WebhookDelivery,
    trace: Record<string, string>,
  ): Promise<{ ok: true } | { ok: false; retry: boolean; detail: string }> {
    const body = JSON.stringify(delivery.payload);
    const timestamp = webhookTimestamp(this.opts.now?.() ?? new Date());
    // Nothing goes out unsigned: without a secret to read this attempt fails, and the next one reads again.
    const secret =
      delivery.flow !== undefined
        ? await this.flowSecret(delivery.namespace, delivery.flow)
        : await this.opts.secretFor(delivery.namespace, delivery.crew);
    // Nor without the credentials its kickoff gave (never logged: only the header carries them).
    const authorization =
      delivery.authorization && this.opts.authorizationFor
        ? await this.opts.authorizationFor(delivery.namespace, delivery.authorization)
        : undefined;
    const headers: Record<string, string> = {
      ...(authorization ? { Authorization: authorization } : {}),
      "Content-Type": "application/json",
      "User-Agent": "kubecrew-controller",
      [TIMESTAMP_HEADER]: timestamp,
      [DELIVERY_HEADER]: deliveryId(delivery),
      [EVENT_HEADER]: delivery.kind,
      [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
      ...trace,
    };
    const res = await (this.opts.fetch ?? fetch)(delivery.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true };
    const retry = res.status >= 500 || res.status === 408 || res.status === 429;
    return { ok: false, retry, detail: `HTTP ${res.status}` };
  }
}
