/**
 * How many task processes `kubecrew dev` runs at once (KUBECREW_DEV_MAX_TASKS): a task beyond the limit waits, first
 * come first served, until a running one ends. What a node's capacity is to Jobs in a cluster.
 */
export class TaskSlots {
  private running = 0;
  private readonly waiting = new Set<() => void>();
  readonly limit: number;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`task slots: ${limit} is not a positive integer`);
    this.limit = limit;
  }

  /**
   * Calls `start` as soon as a slot is free (at once when one is) and holds the slot for it until `release()`.
   * Answers a function that gives up the wait; it does nothing once `start` was called.
   */
  whenFree(start: () => void): () => void {
    if (this.running < this.limit) {
      this.running++;
      start();
      return () => {};
    }
    this.waiting.add(start);
    return () => this.waiting.delete(start);
  }

  /** Frees a slot held by a started task; the longest waiting task gets it. */
  release(): void {
    const next = this.waiting.values().next();
    if (next.done) {
      this.running = Math.max(0, this.running - 1);
      return;
    }
    this.waiting.delete(next.value);
    next.value();
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.size;
  }
}
