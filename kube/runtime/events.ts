import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { isAlreadyExists, type KubeClient } from "./client.ts";
import { EVENTS, resourcePath } from "./resources.ts";

/** The object an Event is about; of the recorder's `involvedKind` unless it names its own. */
export interface EventTarget {
  name: string;
  namespace: string;
  uid: string;
  apiVersion?: string;
  kind?: string;
}

/** Events waiting for the apiserver at most; beyond that new ones are dropped (as client-go's broadcaster does). */
export const EVENT_BACKLOG = 500;

/** Events posted per second at most, with bursts of up to EVENT_BURST (the kubelet's defaults: event-qps, -burst). */
export const EVENTS_PER_SECOND = 50;
export const EVENT_BURST = 100;

/**
 * Records core/v1 Events on the objects a controller reconciles. The event's name is derived from the object, reason
 * and message, so a reconcile replayed on a stale cache (or by a restarted controller) finds the event already there
 * instead of posting it twice. Recording never blocks or fails a reconcile, and Events stay off the hot path: give the
 * recorder a client of its own with few connections; when the apiserver falls behind (more than `backlog` Events
 * waiting) new Events are dropped and counted (`onDropped`) instead of queueing up in front of the writes that move
 * the work forward. And Events have a budget (a token bucket: `perSecond`, bursts of `burst`), as the kubelet's: at
 * thousands of reconciles a minute each Event is an apiserver write and an etcd key, for a record that the objects'
 * status already carries; beyond the budget they are dropped and counted too. `perSecond` 0 records none.
 */
export class EventRecorder {
  private readonly client: Pick<KubeClient, "create">;
  private readonly log: Logger;
  private readonly component: string;
  private readonly reportingController: string;
  private readonly involvedKind: { apiVersion: string; kind: string };
  private readonly instance: string;
  private readonly now: () => Date;
  private readonly recent = new Set<string>();
  private inFlight = new Set<Promise<void>>();
  private readonly backlog: number;
  private readonly onDropped: () => void;
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly clockMs: () => number;
  private tokens: number;
  private filledAt: number;

  constructor(opts: {
    client: Pick<KubeClient, "create">;
    log: Logger;
    instance: string;
    now: () => Date;
    /** The Events' source component, e.g. `my-controller`. */
    component: string;
    /** The Events' reportingComponent (a qualified name, e.g. `example.com/my-controller`). */
    reportingController: string;
    /** The kind of the objects the Events are about (a target may name its own). */
    involvedKind: { apiVersion: string; kind: string };
    backlog?: number;
    onDropped?: () => void;
    perSecond?: number;
    burst?: number;
    /** A monotonic clock in ms for the budget (performance.now unless given). */
    clockMs?: () => number;
  }) {
    this.client = opts.client;
    this.backlog = opts.backlog ?? EVENT_BACKLOG;
    this.perSecond = opts.perSecond ?? EVENTS_PER_SECOND;
    this.burst = Math.max(1, opts.burst ?? EVENT_BURST);
    this.clockMs = opts.clockMs ?? (() => performance.now());
    this.tokens = this.burst;
    this.filledAt = this.clockMs();
    this.onDropped = opts.onDropped ?? (() => undefined);
    this.log = opts.log;
    this.instance = opts.instance;
    this.now = opts.now;
    this.component = opts.component;
    this.reportingController = opts.reportingController;
    this.involvedKind = opts.involvedKind;
  }

  record(target: EventTarget, type: "Normal" | "Warning", reason: string, message: string): void {
    const digest = createHash("sha256").update(`${target.uid}\n${reason}\n${message}`).digest("hex").slice(0, 16);
    const name = `${target.name}.${digest}`;
    const key = `${target.namespace}/${name}`;
    if (this.recent.has(key)) return;
    if (this.inFlight.size >= this.backlog || !this.withinBudget()) {
      this.onDropped();
      return;
    }
    this.recent.add(key);
    if (this.recent.size > 10_000) this.recent.clear();
    const now = this.now().toISOString();
    const body = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: target.namespace },
      involvedObject: {
        apiVersion: target.apiVersion ?? this.involvedKind.apiVersion,
        kind: target.kind ?? this.involvedKind.kind,
        name: target.name,
        namespace: target.namespace,
        uid: target.uid,
      },
      reason,
      message,
      type,
      source: { component: this.component },
      reportingComponent: this.reportingController,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const p = this.client
      .create(resourcePath(EVENTS, target.namespace), body)
      .then(
        () => undefined,
        (err: unknown) => {
          if (!isAlreadyExists(err))
            this.log.warn(
              { err: String(err), object: `${target.namespace}/${target.name}`, reason },
              "Cannot record event",
            );
        },
      )
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Takes a token from the bucket, refilled at `perSecond` up to `burst`; false when none is left. */
  private withinBudget(): boolean {
    if (this.perSecond <= 0) return false;
    const now = this.clockMs();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.filledAt) / 1000) * this.perSecond);
    this.filledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits for events being posted (graceful shutdown, tests). */
  async flush(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
