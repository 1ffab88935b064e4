import { DelayedKeys } from "./delayed-keys.ts";

/**
 * A work queue keyed by object (as client-go's): a key waits at most once; a key being processed is never handed to
 * a second worker, and one added meanwhile is handed out again when the first worker is done; failed keys come back
 * after a per-key exponential backoff; `addAfter` schedules a later look (a deadline).
 *
 * Two lanes: `addUrgent` keys (work in progress: a child of the object changed) are handed out before `add` keys (new
 * work). Under a burst of new work, work in progress then waits for a free worker, not for everything queued before
 * it; finishing work comes before starting more. A worker may also take urgent keys only (`get({ urgentOnly: true })`):
 * kept for them, it is free when every other worker is busy starting new work, so work in progress does not wait for
 * new work's round trips to end.
 */
export interface WorkQueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Sees how long each key waited in a lane before a worker took it (0 when a worker was idle). */
  onWait?: (lane: "urgent" | "normal", ms: number) => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly urgent: string[] = [];
  /** Keys waiting in a lane. A key moved to the urgent lane leaves a stale entry in the other, skipped when met. */
  private readonly queued = new Set<string>();
  /** Keys added urgently while being processed: they go to the urgent lane when done. */
  private readonly urgentLater = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  /** Keys added with addAfter, until they are due (one timer for all). */
  private readonly later = new DelayedKeys((key) => this.add(key));
  /** When each waiting key joined a lane (performance.now()), for onWait. */
  private readonly queuedAt = new Map<string, number>();
  private readonly onWait: WorkQueueOptions["onWait"];
  private waiters: { resolve: (key: string | undefined) => void; urgentOnly: boolean }[] = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.onWait = options.onWait;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.handOut(key, false);
  }

  /** As add, in the urgent lane (a key already waiting in the other lane moves up). */
  addUrgent(key: string): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) {
      if (this.queued.has(key)) this.urgent.push(key);
      else if (this.processing.has(key)) this.urgentLater.add(key);
      return;
    }
    this.dirty.add(key);
    if (this.processing.has(key)) {
      this.urgentLater.add(key);
      return;
    }
    this.handOut(key, true);
  }

  /** Adds the key after `ms`; an earlier pending schedule for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    this.later.schedule(key, ms);
  }

  /** Adds the key again after a backoff that doubles with each consecutive failure of that key. */
  addRateLimited(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
    this.addAfter(key, delay);
    return delay;
  }

  /** The key was handled well: its backoff starts again from the base delay. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key to work on; undefined once the queue shuts down. The caller must call done(key). */
  get(o: { urgentOnly?: boolean } = {}): Promise<string | undefined> {
    const urgent = this.next(this.urgent);
    const key = urgent ?? (o.urgentOnly ? undefined : this.next(this.queue));
    if (key !== undefined) {
      const at = this.queuedAt.get(key);
      this.queuedAt.delete(key);
      if (at !== undefined) this.onWait?.(urgent !== undefined ? "urgent" : "normal", performance.now() - at);
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push({ resolve, urgentOnly: o.urgentOnly ?? false }));
  }

  /** The first key of a lane still waiting (stale entries of keys moved to the urgent lane are dropped). */
  private next(lane: string[]): string | undefined {
    for (let key = lane.shift(); key !== undefined; key = lane.shift()) {
      if (this.queued.delete(key)) return key;
    }
    return undefined;
  }

  /** A dirty key not being processed goes to a waiting worker, or joins a lane. */
  private handOut(key: string, urgent: boolean): void {
    const waiter = this.waiters.splice(this.waiterFor(urgent), 1)[0];
    if (waiter) {
      this.dirty.delete(key);
      this.processing.add(key);
      this.onWait?.(urgent ? "urgent" : "normal", 0);
      waiter.resolve(key);
    } else {
      if (this.onWait && !this.queuedAt.has(key)) this.queuedAt.set(key, performance.now());
      this.queued.add(key);
      (urgent ? this.urgent : this.queue).push(key);
    }
  }

  /**
   * The waiting worker for a key of this lane (an index past the end: none): an urgent key goes to a worker kept for
   * urgent keys first, leaving the others for new work; a key of the other lane only to a worker that takes any.
   */
  private waiterFor(urgent: boolean): number {
    const kept = urgent ? this.waiters.findIndex((w) => w.urgentOnly) : -1;
    if (kept >= 0) return kept;
    const any = this.waiters.findIndex((w) => !w.urgentOnly);
    return any >= 0 ? any : this.waiters.length;
  }

  done(key: string): void {
    this.processing.delete(key);
    const urgent = this.urgentLater.delete(key);
    if (!this.dirty.has(key)) return;
    this.handOut(key, urgent);
  }

  get depth(): number {
    return this.queued.size;
  }

  get inFlight(): number {
    return this.processing.size;
  }

  shutDown(): void {
    this.shuttingDown = true;
    this.later.clear();
    for (const w of this.waiters.splice(0)) w.resolve(undefined);
  }
}
