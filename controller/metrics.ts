import { Counter, Gauge } from "prom-client";
import { executionPhases } from "../core/execution.ts";
import { RuntimeMetrics } from "../kube/runtime/metrics.ts";
import type { LlmCostLabels, LlmTokenLabels } from "./usage-metrics.ts";

/**
 * The controller's Prometheus metrics: the runtime's (`kubecrew_controller_` reconciles, queue, apiserver requests,
 * Events, leases; the main work queue is the executions') and kubecrew's own — executions by phase, the limit on
 * tasks starting at once, webhook deliveries.
 */
export class ControllerMetrics extends RuntimeMetrics {
  readonly executions: Gauge<"phase">;
  readonly startingTasks: Gauge;
  readonly waitingToStart: Gauge;
  readonly webhookDeliveries: Counter<"result">;
  readonly llmTokens: Counter<LlmTokenLabels>;
  readonly llmCost: Counter<LlmCostLabels>;

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
    super("kubecrew_controller", sources);
    const registers = this.registers;
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
    this.webhookDeliveries = new Counter({
      name: "kubecrew_controller_webhook_deliveries_total",
      help: "Webhook deliveries that ended, by result (delivered, failed)",
      labelNames: ["result"],
      registers,
    });
    this.llmTokens = new Counter({
      name: "kubecrew_llm_tokens_total",
      help: "Tokens of the LLM calls of finished executions, by crew, model and direction (input, output)",
      labelNames: ["crew", "model", "direction"],
      registers,
    });
    this.llmCost = new Counter({
      name: "kubecrew_llm_cost_usd_total",
      help: "US dollars the LLM calls of finished executions cost, by crew and model (models priced in KUBECREW_LLM_PRICES)",
      labelNames: ["crew", "model"],
      registers,
    });
  }
}
