import { z } from "zod";
import type { CrewSpec } from "./crew.ts";
import { agentFor } from "./crew-process.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * What an execution's LLM calls used, as `/status`, the event stream and the metrics report it: tokens summed over
 * every attempt of every task (a failed attempt's tokens were spent too), and their cost when the model has a price.
 */

/** US dollars per million tokens, in and out, of one model. */
export const modelPrice = z.strictObject({ input: z.number().min(0), output: z.number().min(0) });

/**
 * KUBECREW_LLM_PRICES: a JSON object, model name (as the crew's llm names it) → `{input, output}` US dollars per
 * million tokens. No built-in prices: they change too often to ship; a model without a price has no `cost_usd`.
 */
export const llmPricesEnv = z
  .string()
  .optional()
  .transform((text, ctx): LlmPrices => {
    if (!text?.trim()) return {};
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: "custom", message: 'must be JSON: {"<model>": {"input": <usd>, "output": <usd>}}' });
      return z.NEVER;
    }
    const parsed = z.record(z.string().min(1), modelPrice).safeParse(json);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    ctx.addIssue({ code: "custom", message: `${issue.path.join(".") || "(the object)"}: ${issue.message}` });
    return z.NEVER;
  });
export type LlmPrices = Record<string, z.infer<typeof modelPrice>>;

/** The wire form (snake_case, additive to CrewAI's bodies). */
export const usageBody = z
  .object({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    total_tokens: z.number().int(),
    cost_usd: z
      .number()
      .optional()
      .describe("US dollars, from the price table (KUBECREW_LLM_PRICES); absent when a model used has no price"),
  })
  .meta({ id: "Usage" });
export type UsageBody = z.infer<typeof usageBody>;

/** The model a task's agent uses (the crew's default filled in), for the results that do not name theirs. */
export function taskModel(spec: CrewSpec | undefined, task: string): string | undefined {
  try {
    return spec ? agentFor(spec, task).llm?.model : undefined;
  } catch {
    return undefined; // a task the spec no longer has
  }
}

interface ModelTokens {
  /** What the result names (`provider/model` as the provider answered), else the agent's model. */
  model: string | undefined;
  /** The agent's model as the crew names it. */
  configured: string | undefined;
  input: number;
  output: number;
  total: number;
}

/** The tokens of one task's attempts, per model (a result names its model; else the task's agent's). */
function tokensOf(results: readonly TaskResultSpec[], fallbackModel: string | undefined): ModelTokens[] {
  return results
    .filter((r) => r.tokenUsage)
    .map((r) => ({
      model: r.model ?? fallbackModel,
      configured: fallbackModel,
      input: r.tokenUsage!.inputTokens,
      output: r.tokenUsage!.outputTokens,
      total: r.tokenUsage!.totalTokens || r.tokenUsage!.inputTokens + r.tokenUsage!.outputTokens,
    }));
}

/**
 * A result's price: the table's entry for the model the provider answered with (`provider/model`, then the model
 * alone), else for the model the crew names (a provider may answer with a dated name, gpt-x-2025-01-01 for gpt-x).
 */
function priceOf(prices: LlmPrices, t: ModelTokens) {
  const answered = t.model;
  const bare = answered?.includes("/") ? answered.slice(answered.indexOf("/") + 1) : undefined;
  for (const name of [answered, bare, t.configured]) if (name !== undefined && prices[name]) return prices[name];
  return undefined;
}

function bodyOf(tokens: readonly ModelTokens[], prices: LlmPrices): UsageBody | undefined {
  const body: UsageBody = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let cost = 0;
  let priced = true;
  for (const t of tokens) {
    body.input_tokens += t.input;
    body.output_tokens += t.output;
    body.total_tokens += t.total;
    const price = priceOf(prices, t);
    if (price) cost += (t.input * price.input + t.output * price.output) / 1e6;
    else if (t.total > 0) priced = false;
  }
  if (body.total_tokens === 0) return undefined;
  // Micro-dollars: enough for a single small call, without float noise in the JSON.
  return priced ? { ...body, cost_usd: Math.round(cost * 1e6) / 1e6 } : body;
}

/** One task's usage; undefined when its attempts reported no tokens (the mock provider, a task not run yet). */
export function taskUsage(
  results: readonly TaskResultSpec[],
  model: string | undefined,
  prices: LlmPrices = {},
): UsageBody | undefined {
  return bodyOf(tokensOf(results, model), prices);
}

/** The execution's usage: every task's summed; undefined when none reported tokens. */
export function executionUsage(
  tasks: readonly { name: string; model?: string | undefined }[],
  resultsByTask: Readonly<Record<string, readonly TaskResultSpec[]>>,
  prices: LlmPrices = {},
): UsageBody | undefined {
  return bodyOf(
    tasks.flatMap((t) => tokensOf(resultsByTask[t.name] ?? [], t.model)),
    prices,
  );
}

/**
 * The execution's tokens by model (`unknown` for results that name none), for the metrics; `costUsd` sums the calls
 * whose model has a price in `prices` (absent when none has).
 */
export function tokensByModel(
  spec: CrewSpec | undefined,
  resultsByTask: Readonly<Record<string, readonly TaskResultSpec[]>>,
  prices: LlmPrices = {},
): Map<string, { input: number; output: number; costUsd?: number }> {
  const byModel = new Map<string, { input: number; output: number; costUsd?: number }>();
  for (const [task, results] of Object.entries(resultsByTask)) {
    for (const t of tokensOf(results, taskModel(spec, task))) {
      const sum = byModel.get(t.model ?? "unknown") ?? { input: 0, output: 0 };
      sum.input += t.input;
      sum.output += t.output;
      const price = priceOf(prices, t);
      if (price) sum.costUsd = (sum.costUsd ?? 0) + (t.input * price.input + t.output * price.output) / 1e6;
      byModel.set(t.model ?? "unknown", sum);
    }
  }
  return byModel;
}

/** Usage as the CrewExecution's status keeps it (camelCase, as every status field). */
export const usageStatus = z.object({
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  totalTokens: z.number().int(),
  costUsd: z
    .number()
    .optional()
    .describe("US dollars, from the controller's price table (KUBECREW_LLM_PRICES); absent when a model has none"),
});
export type UsageStatus = z.infer<typeof usageStatus>;

/** The wire form's usage as a status field. */
export function usageStatusOf(body: UsageBody): UsageStatus {
  return {
    inputTokens: body.input_tokens,
    outputTokens: body.output_tokens,
    totalTokens: body.total_tokens,
    ...(body.cost_usd !== undefined ? { costUsd: body.cost_usd } : {}),
  };
}
