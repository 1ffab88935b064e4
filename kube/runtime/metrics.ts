import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * A controller's Prometheus metrics that any controller has — its reconciles, work queue, apiserver requests, Events
 * and leases — on a registry of its own (no global state), every name starting with `prefix`.
 */
export class RuntimeMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<"result">;
  readonly reconcileDuration: Histogram<"result">;
  readonly queueDepth: Gauge;
  readonly inFlight: Gauge;
  readonly apiWrites: Counter<"verb" | "resource">;
  readonly apiRequestDuration: Histogram<"method" | "resource" | "code">;
  readonly queueWait: Histogram<"lane">;
  readonly eventsDropped: Counter;
  readonly isLeader: Gauge;
  readonly shardsHeld: Gauge<"shard">;
  protected readonly registers: Registry[];

  constructor(
    /** Every metric's name starts with `<prefix>_` (the process's own, collectDefaultMetrics', too). */
    prefix: string,
    sources: {
      /** The main work queue: keys waiting, and being reconciled. */
      queueDepth: () => number;
      inFlight: () => number;
      isLeader: () => boolean;
      /** Sharded: the shard count and the shards this replica holds. */
      shards?: () => { count: number; held: readonly number[] };
    },
  ) {
    const registers = [this.registry];
    this.registers = registers;
    collectDefaultMetrics({ register: this.registry, prefix: `${prefix}_` });
    this.reconciles = new Counter({
      name: `${prefix}_reconciles_total`,
      help: "Reconciles of the main work queue's keys, by result (success, error, conflict)",
      labelNames: ["result"],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: `${prefix}_reconcile_duration_seconds`,
      help: "Time one reconcile took",
      labelNames: ["result"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.queueDepth = new Gauge({
      name: `${prefix}_queue_depth`,
      help: "Keys waiting in the main work queue",
      registers,
      collect() {
        this.set(sources.queueDepth());
      },
    });
    this.inFlight = new Gauge({
      name: `${prefix}_reconciles_in_flight`,
      help: "Reconciles running now",
      registers,
      collect() {
        this.set(sources.inFlight());
      },
    });
    this.apiWrites = new Counter({
      name: `${prefix}_apiserver_writes_total`,
      help: "Writes the controller made to the Kubernetes API, by verb and resource",
      labelNames: ["verb", "resource"],
      registers,
    });
    this.apiRequestDuration = new Histogram({
      name: `${prefix}_apiserver_request_duration_seconds`,
      help: "Time from sending a request to the Kubernetes API to its whole answer (watches not included), by method, resource and HTTP status (0: no answer)",
      labelNames: ["method", "resource", "code"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.queueWait = new Histogram({
      name: `${prefix}_queue_wait_seconds`,
      help: "Time a key waited in the main work queue for a worker, by lane (urgent: work in progress; normal)",
      labelNames: ["lane"],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.eventsDropped = new Counter({
      name: `${prefix}_events_dropped_total`,
      help: "Events not posted: too many were already waiting for the apiserver, or beyond the Events' budget",
      registers,
    });
    this.isLeader = new Gauge({
      name: `${prefix}_leader`,
      help: "1 while this replica holds the leader lease (sharded: at least one shard's lease)",
      registers,
      collect() {
        this.set(sources.isLeader() ? 1 : 0);
      },
    });
    this.shardsHeld = new Gauge({
      name: `${prefix}_shard_held`,
      help: "Per shard (when the work is sharded): 1 while this replica holds its Lease",
      labelNames: ["shard"],
      registers,
      collect() {
        const shards = sources.shards?.();
        if (!shards) return;
        for (let i = 0; i < shards.count; i++) this.set({ shard: String(i) }, shards.held.includes(i) ? 1 : 0);
      },
    });
  }
}

/** The resource a write went to, from its API path (`.../namespaces/x/jobs/y/status` → `jobs/status`). */
export function resourceOfPath(path: string): string {
  const parts = path.split("?")[0]!.split("/").filter(Boolean);
  const ns = parts.indexOf("namespaces");
  const rest = ns >= 0 ? parts.slice(ns + 2) : parts.slice(parts[0] === "api" ? 2 : 3);
  const resource = rest[0] ?? "unknown";
  return rest[2] ? `${resource}/${rest[2]}` : resource;
}
