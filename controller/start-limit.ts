import { cacheKey, objectKey, type InformerEvent } from "../kube/runtime/informer.ts";
import { LABEL_EXECUTION } from "../kube/resources.ts";
import { projectJobName, taskJobName } from "../kube/task-names.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedTaskResult } from "../kube/typed-objects.ts";
import type { Caches } from "./caches.ts";
import { jobRunState, type JobObject } from "./observe.ts";

/**
 * The limit on tasks starting at once: backpressure on what waits on the cluster. A task is *starting* from its Job's
 * creation until its pod runs (the Job's `status.ready` ≥ 1) or the task ended (the Job's terminal condition, its
 * deletion, or a CrewTaskResult of the task). A task running an LLM for minutes is not starting and never counts.
 *
 * Each start asks for a slot (`tryStart`); without one the execution waits here, not in the work queue: it is queued
 * again (`wake`) when a slot frees, in this order: executions already running (their next task) before new ones, and
 * among each the oldest first. A newcomer never goes before one that waits. Slots are counted from the Job cache's
 * events (`watch`), not in the reconciles: a Job's `ready` changes nothing of its execution and starts no reconcile
 * (triggers.ts); here it frees a slot.
 *
 * Sharded, the count and the waiting are this replica's: the tasks and executions of the shards it holds.
 */
export interface StartLimitOptions {
  /** Tasks starting at once at most; 0: no limit (tasks are still counted). */
  max: number;
  /** Puts an execution back in the work queue: a slot freed for it. `running`: it runs already (its next task). */
  wake: (execution: string, running: boolean) => void;
  /** Sharded: whether this replica owns the execution (by its cache key). */
  owns?: (execution: string) => boolean;
}

/** One task about to start. */
export interface StartRequest {
  /** The execution's cache key. */
  execution: string;
  /** The cache key of the task's Job (deterministic: it need not exist yet). */
  job: string;
  /** The execution runs already (a later task): it goes before every new execution. */
  running: boolean;
  /** The execution's creationTimestamp: the oldest goes first. */
  createdAt: string;
}

interface Waiter {
  execution: string;
  running: boolean;
  createdAt: string;
  /** Arrival order, for executions created in the same second. */
  seq: number;
}

/** Whether `a` goes before `b`: running first, then the oldest, then the first to have asked. */
function before(a: Waiter, b: Waiter): boolean {
  if (a.running !== b.running) return a.running;
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt;
  return a.seq < b.seq;
}

/** Whether the Job's task is still starting, from the Job alone (its result is looked at separately). */
export function jobStarting(job: JobObject): boolean {
  return jobRunState(job).state === "running" && !job.status?.ready;
}

/**
 * The cache keys of the Jobs a result may come from (the cache keeps its execution label and its spec): its task's, and
 * its execution's whole project's (spec.runner.crew: one Job writes every task's results), which only a project has.
 */
function jobsOfResult(result: CachedTaskResult | Undecodable): string[] {
  const execution = result.metadata.labels?.[LABEL_EXECUTION];
  if (!execution || isUndecodable(result)) return [];
  const namespace = result.metadata.namespace!;
  return [
    cacheKey(namespace, taskJobName(execution, result.spec.taskIndex, result.spec.revision ?? 0)),
    cacheKey(namespace, projectJobName(execution)),
  ];
}

export class StartLimit {
  private readonly o: StartLimitOptions;
  /** Starting tasks' Jobs (cache key → execution key), as the Job cache shows them. */
  private readonly starting = new Map<string, string>();
  /** Slots given to a reconcile whose Job may not be in the cache yet (Job key → execution key). */
  private readonly reserved = new Map<string, string>();
  /** Executions waiting for a slot, in the order they get one. */
  private readonly waiting: Waiter[] = [];
  private readonly waiters = new Map<string, Waiter>();
  /** Waiting executions put back in the work queue and not reconciled since. */
  private readonly woken = new Set<string>();
  private seq = 0;
  private results: Pick<Caches["results"], "byIndex"> | undefined;

  constructor(options: StartLimitOptions) {
    this.o = options;
  }

  /** Counts from the caches: Jobs starting and ending their start, results arriving, executions deleted. */
  watch(caches: Pick<Caches, "executions" | "jobs" | "results">): void {
    this.results = caches.results;
    caches.jobs.on((event, job) => this.jobChanged(event, job));
    caches.results.on((event, result) => this.resultChanged(event, result));
    caches.executions.on((event, execution) => {
      if (event === "delete") this.forget(objectKey(execution));
    });
  }

  /** A Job came, changed or went (the Job cache's event). */
  jobChanged(event: InformerEvent, job: JobObject): void {
    const key = objectKey(job);
    const execution = job.metadata?.labels?.[LABEL_EXECUTION];
    if (event === "add" && execution && jobStarting(job) && !this.reported(key, job.metadata!.namespace!, execution)) {
      this.starting.set(key, cacheKey(job.metadata!.namespace!, execution));
      return;
    }
    // A start ends once: a Job that ran (or a result) leaves the count for good, even if a later pod starts again.
    if ((event === "delete" || !jobStarting(job)) && this.starting.delete(key)) this.slotFreed();
  }

  /** A result came (the result cache's event): its task's pod runs, or ran. */
  resultChanged(event: InformerEvent, result: CachedTaskResult | Undecodable): void {
    const jobs = event === "delete" ? [] : jobsOfResult(result);
    if (jobs.filter((job) => this.starting.delete(job)).length > 0) this.slotFreed();
  }

  /** Whether the task of a Job just seen has a result already (a restart: the caches fill in any order). */
  private reported(job: string, namespace: string, execution: string): boolean {
    return !!this.results?.byIndex(cacheKey(namespace, execution)).some((r) => jobsOfResult(r).includes(job));
  }

  /**
   * A slot for the task, or false: then the execution waits for one and is woken when it is its turn. A slot given
   * is held until `settle()`, by then by the Job itself.
   */
  tryStart(request: StartRequest): boolean {
    const { execution } = request;
    this.woken.delete(execution);
    if (this.o.max > 0) {
      const waiter = this.waiters.get(execution);
      const candidate: Waiter = waiter
        ? { ...waiter, running: request.running, createdAt: request.createdAt }
        : { execution, running: request.running, createdAt: request.createdAt, seq: Number.MAX_SAFE_INTEGER };
      if (this.waitersAhead(candidate) >= this.free()) {
        if (!waiter) this.enqueue({ ...candidate, seq: this.seq++ });
        else if (waiter.running !== candidate.running || waiter.createdAt !== candidate.createdAt) {
          this.dequeue(waiter);
          this.enqueue(candidate);
        }
        return false;
      }
      if (waiter) this.dequeue(waiter);
    }
    this.reserved.set(request.job, execution);
    return true;
  }

  /** The reconcile that was given a slot is over: its Job (if it was created) holds it from now on. */
  settle(execution: string): void {
    let freed = false;
    for (const [job, owner] of this.reserved) {
      if (owner !== execution) continue;
      this.reserved.delete(job);
      freed ||= !this.starting.has(job);
    }
    if (freed) this.slotFreed();
  }

  /** The execution has no task to start (finished, stopped, deleted): it waits no more. */
  forget(execution: string): void {
    this.woken.delete(execution);
    const waiter = this.waiters.get(execution);
    if (!waiter) return;
    this.dequeue(waiter);
    this.slotFreed();
  }

  /**
   * Sharded: this replica stopped owning some executions (a shard lost or given up). Those waiting here leave the line
   * at once — their new owner serves them — and the slots any of them had been woken for go to the next in line here:
   * a woken execution whose shard moved is never reconciled here, so its slot would otherwise wait for the next start
   * to end, and with nothing else starting, for ever.
   */
  ownershipChanged(): void {
    for (const w of [...this.waiting]) {
      if (this.counts(w.execution)) continue;
      this.dequeue(w);
      this.woken.delete(w.execution);
    }
    this.slotFreed();
  }

  /** Tasks starting now (this replica's), slots given to reconciles under way included. */
  get startingCount(): number {
    let n = 0;
    for (const execution of this.starting.values()) if (this.counts(execution)) n++;
    for (const [job, execution] of this.reserved) if (!this.starting.has(job) && this.counts(execution)) n++;
    return n;
  }

  /** Executions waiting for a slot. */
  get waitingCount(): number {
    let n = 0;
    for (const w of this.waiting) if (this.counts(w.execution)) n++;
    return n;
  }

  private counts(execution: string): boolean {
    return !this.o.owns || this.o.owns(execution);
  }

  private free(): number {
    return this.o.max - this.startingCount;
  }

  /** How many (owned) waiters go before the candidate, counting no further than the free slots. */
  private waitersAhead(candidate: Waiter): number {
    const limit = Math.max(0, this.free());
    let n = 0;
    for (const w of this.waiting) {
      if (n >= limit || !before(w, candidate)) break;
      if (w.execution !== candidate.execution && this.counts(w.execution)) n++;
    }
    return n;
  }

  /** Wakes the waiters that a free slot is for now (each once until it is reconciled). */
  private slotFreed(): void {
    if (this.o.max === 0) return;
    let free = this.free();
    for (let i = 0; i < this.waiting.length && free > 0;) {
      const w = this.waiting[i]!;
      if (!this.counts(w.execution)) {
        // A shard lost (ownershipChanged() is called for it): its executions wait at their new owner.
        this.dequeue(w);
        this.woken.delete(w.execution);
        continue;
      }
      if (!this.woken.has(w.execution)) {
        this.woken.add(w.execution);
        this.o.wake(w.execution, w.running);
      }
      free--;
      i++;
    }
  }

  private enqueue(waiter: Waiter): void {
    let lo = 0;
    let hi = this.waiting.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.waiting[mid]!, waiter)) lo = mid + 1;
      else hi = mid;
    }
    this.waiting.splice(lo, 0, waiter);
    this.waiters.set(waiter.execution, waiter);
  }

  private dequeue(waiter: Waiter): void {
    const i = this.waiting.indexOf(waiter);
    if (i >= 0) this.waiting.splice(i, 1);
    this.waiters.delete(waiter.execution);
  }
}
