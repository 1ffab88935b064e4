import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { executionPhases } from "../core/execution.ts";

/** The controller's Prometheus metrics, on a registry of its own (no global state). */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<"result">;
  readonly reconcileDuration: Histogram<"result">;
  readonly executions: Gauge<"phase">;
  readonly queueDepth: Gauge;
  readonly inFlight: Gauge;
  readonly startingTasks: Gauge;
  readonly waitingToStart: Gauge;
  readonly apiWrites: Counter<"verb" | "resource">;
  readonly apiRequestDuration: Histogram<"method" | "resource" | "code">;
  readonly queueWait: Histogram<"lane">;
  readonly webhookDeliveries: Counter<"result">;
  readonly eventsDropped: Counter;
  readonly isLeader: Gauge;
  readonly shardsHeld: Gauge<"shard">;

  constructor(sources: {
    phases: () => (string | undefined)[];
    queueDepth: () => number;
    inFlight: () => number;
    /** The limit on tasks starting at once: tasks starting, executions waiting for a slot. */
    starts: () => { starting: number; waiting: number };
    isLeader: () => boolean;
    /** Sharded: the shard count and the shards this replica holds. */
    shards?: () => { count: number; held: readonly number[] };
  }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "kubecrew_controller_" });
    this.reconciles = new Counter({
      name: "kubecrew_controller_reconciles_total",
      help: "Reconciles of CrewExecutions, by result (success, error, conflict)",
      labelNames: ["result"],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: "kubecrew_controller_reconcile_duration_seconds",
      help: "Time one reconcile took",
      labelNames: ["result"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.executions = new Gauge({
      name: "kubecrew_executions",
      help: "CrewExecutions in the controller's cache, by phase",
      labelNames: ["phase"],
      registers,
      collect() {
        const counts = Object.fromEntries(executionPhases.map((p) => [p, 0])) as Record<string, number>;
        for (const phase of sources.phases()) counts[phase ?? "Pending"] = (counts[phase ?? "Pending"] ?? 0) + 1;
        for (const [phase, n] of Object.entries(counts)) this.set({ phase }, n);
      },
    });
    this.queueDepth = new Gauge({
      name: "kubecrew_controller_queue_depth",
      help: "Executions waiting in the work queue",
      registers,
      collect() {
        this.set(sources.queueDepth());
      },
    });
    this.inFlight = new Gauge({
      name: "kubecrew_controller_reconciles_in_flight",
      help: "Reconciles running now",
      registers,
      collect() {
        this.set(sources.inFlight());
      },
    });
    this.startingTasks = new Gauge({
      name: "kubecrew_controller_starting_tasks",
      help: "Tasks starting now: Job created, pod not running yet (KUBECREW_CONTROLLER_MAX_STARTING_TASKS at most)",
      registers,
      collect() {
        this.set(sources.starts().starting);
      },
    });
    this.waitingToStart = new Gauge({
      name: "kubecrew_controller_executions_waiting_to_start",
      help: "Executions whose next task waits for a slot under KUBECREW_CONTROLLER_MAX_STARTING_TASKS",
      registers,
      collect() {
        this.set(sources.starts().waiting);
      },
    });
    this.apiWrites = new Counter({
      name: "kubecrew_controller_apiserver_writes_total",
      help: "Writes the controller made to the Kubernetes API, by verb and resource",
      labelNames: ["verb", "resource"],
      registers,
    });
    this.apiRequestDuration = new Histogram({
      name: "kubecrew_controller_apiserver_request_duration_seconds",
      help: "Time from sending a request to the Kubernetes API to its whole answer (watches not included), by method, resource and HTTP status (0: no answer)",
      labelNames: ["method", "resource", "code"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.queueWait = new Histogram({
      name: "kubecrew_controller_queue_wait_seconds",
      help: "Time an execution's key waited in the work queue for a worker, by lane (urgent: a child changed; normal)",
      labelNames: ["lane"],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: "kubecrew_controller_webhook_deliveries_total",
      help: "Webhook deliveries that ended, by result (delivered, failed)",
      labelNames: ["result"],
      registers,
    });
    this.eventsDropped = new Counter({
      name: "kubecrew_controller_events_dropped_total",
      help: "Events not posted: too many were already waiting for the apiserver, or beyond the Events' budget (KUBECREW_EVENTS_PER_SECOND)",
      registers,
    });
    this.isLeader = new Gauge({
      name: "kubecrew_controller_leader",
      help: "1 while this replica holds the leader lease (sharded: at least one shard's lease)",
      registers,
      collect() {
        this.set(sources.isLeader() ? 1 : 0);
      },
    });
    this.shardsHeld = new Gauge({
      name: "kubecrew_controller_shard_held",
      help: "Per shard of executions (KUBECREW_CONTROLLER_SHARDS > 1): 1 while this replica holds its Lease",
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
