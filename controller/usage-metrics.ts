import type { Counter } from "prom-client";
import type { CrewSpec } from "../core/crew.ts";
import type { ObservedTask } from "../core/observed-task.ts";
import { tokensByModel } from "../core/usage.ts";

/** The counter's labels: the crew, the model, `input` or `output`. */
export type LlmTokenLabels = "crew" | "model" | "direction";

/**
 * Counts an execution's tokens into `kubecrew_llm_tokens_total` once, when the controller writes its finished phase
 * (that write succeeds once, on the one replica that owns the execution): from the CrewTaskResults it already reads,
 * so no runner pod is scraped.
 */
export function countFinishedExecution(
  counter: Pick<Counter<LlmTokenLabels>, "inc">,
  crew: string,
  spec: CrewSpec | undefined,
  observed: Readonly<Record<string, ObservedTask | undefined>>,
): void {
  const results = Object.fromEntries(Object.entries(observed).map(([task, o]) => [task, o?.results ?? []]));
  for (const [model, tokens] of tokensByModel(spec, results)) {
    if (tokens.input > 0) counter.inc({ crew, model, direction: "input" }, tokens.input);
    if (tokens.output > 0) counter.inc({ crew, model, direction: "output" }, tokens.output);
  }
}
