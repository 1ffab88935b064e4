import type { Logger } from "pino";
import type { Counter, Histogram } from "prom-client";
import type { WorkQueue } from "./work-queue.ts";

/**
 * A write lost a race with another writer (a stop, another controller): the reconcile throws it and its key is
 * looked at again, without a warning (the watch brings the newer version).
 */
export class StaleObjectError extends Error {
  override name = "StaleObjectError";
}

/** The reconcile metrics a worker counts in (runtime/metrics.ts). */
export interface ReconcileMetrics {
  reconciles: Pick<Counter<"result">, "inc">;
  reconcileDuration: Pick<Histogram<"result">, "observe">;
}

/** What one reconcile asks of the queue: look again after a while (a deadline, a TTL), or not. */
export interface ReconcileResult {
  requeueAfterMs?: number;
  phase?: string;
}

export interface Reconciles {
  reconcile(key: string): Promise<ReconcileResult>;
}

/**
 * One worker: takes keys from the queue until it shuts down and reconciles each. A failure puts the key back with
 * backoff; a stale write (StaleObjectError) too, without a warning: the watch brings the newer version.
 */
export async function runWorker(o: {
  queue: WorkQueue;
  reconciler: Reconciles;
  log: Logger;
  /** The log field naming the key (the kind of object the queue holds). */
  kind: string;
  /** Counted in the reconcile metrics. */
  metrics?: ReconcileMetrics;
  /** Sharded: whether this replica still owns the key (its shard may have been lost since it was queued). */
  owns?: (key: string) => boolean;
  /** Takes only the queue's urgent keys (a worker kept for work in progress). */
  urgentOnly?: boolean;
}): Promise<void> {
  const { queue, log, metrics } = o;
  for (;;) {
    const key = await queue.get({ urgentOnly: o.urgentOnly ?? false });
    if (key === undefined) return;
    if (o.owns && !o.owns(key)) {
      queue.forget(key);
      queue.done(key);
      continue;
    }
    const started = performance.now();
    let result = "success";
    try {
      const outcome = await o.reconciler.reconcile(key);
      log.debug({ [o.kind]: key, ms: Math.round(performance.now() - started), ...outcome }, "Reconciled");
      queue.forget(key);
      if (outcome.requeueAfterMs !== undefined) queue.addAfter(key, outcome.requeueAfterMs);
    } catch (err) {
      const retryInMs = queue.addRateLimited(key);
      if (err instanceof StaleObjectError) {
        result = "conflict";
      } else {
        result = "error";
        log.warn(
          { [o.kind]: key, err: err instanceof Error ? err.message : String(err), retryInMs },
          "Reconcile failed",
        );
      }
    } finally {
      queue.done(key);
      metrics?.reconciles.inc({ result });
      metrics?.reconcileDuration.observe({ result }, (performance.now() - started) / 1000);
    }
  }
}
