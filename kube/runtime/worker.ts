import type { Logger } from "../core/logger.ts";
import { StaleObjectError } from "./apply.ts";
import type { ControllerMetrics } from "./metrics.ts";
import type { WorkQueue } from "./work-queue.ts";

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
  /** The log field naming the key: `execution`, `crew`. */
  kind: string;
  /** Counted in the reconcile metrics (the execution workers). */
  metrics?: ControllerMetrics;
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
