import type { Counter } from "prom-client";
import type { CrewSpec } from "../core/crew.ts";
import type { ObservedTask } from "../core/observed-task.ts";
import type { TaskResultSpec } from "../core/task-result.ts";
import { tokensByModel, type LlmPrices } from "../core/usage.ts";

/** The token counter's labels: the crew, the model, `input` or `output`. */
export type LlmTokenLabels = "crew" | "model" | "direction";
/** The cost counter's labels: the crew, the model. */
export type LlmCostLabels = "crew" | "model";

/** What a finished execution is counted into. */
export interface UsageCounters {
  /** kubecrew_llm_tokens_total */
  tokens: Pick<Counter<LlmTokenLabels>, "inc">;
  /** kubecrew_llm_cost_usd_total: counted only for models with a price in `prices`. */
  cost: Pick<Counter<LlmCostLabels>, "inc">;
  /** KUBECREW_LLM_PRICES: model → US dollars per million input/output tokens. */
  prices: LlmPrices;
}

/**
 * Counts an execution's tokens (and their cost, for priced models) once, when the controller writes its finished
 * phase (that write succeeds once, on the one replica that owns the execution): from the CrewTaskResults it already
 * reads, so no runner pod is scraped.
 */
export function countFinishedExecution(
  counters: UsageCounters,
  crew: string,
  spec: CrewSpec | undefined,
  observed: Readonly<Record<string, ObservedTask | undefined>>,
): void {
  for (const [model, used] of tokensByModel(spec, resultsByTask(observed), counters.prices)) {
    if (used.input > 0) counters.tokens.inc({ crew, model, direction: "input" }, used.input);
    if (used.output > 0) counters.tokens.inc({ crew, model, direction: "output" }, used.output);
    if (used.costUsd !== undefined && used.costUsd > 0) counters.cost.inc({ crew, model }, used.costUsd);
  }
}

/** Each task's results (every attempt), as the observed tasks hold them. */
export function resultsByTask(
  observed: Readonly<Record<string, ObservedTask | undefined>>,
): Record<string, readonly TaskResultSpec[]> {
  return Object.fromEntries(Object.entries(observed).map(([task, o]) => [task, o?.results ?? []]));
}
