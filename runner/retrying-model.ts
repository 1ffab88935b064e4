import type { LanguageModelV3 } from "./mock-model.ts";
import { describeLlmError, withRetry, type RetryOptions } from "./retry.ts";
import type { LlmTurnRecord } from "./step-recorder.ts";

/**
 * The model with each LLM call (each turn of the tool loop) retried on its own by `withRetry`: a transient error in
 * the third turn repeats that turn, not the tools already called. `attempts()` counts the calls made, retries included.
 */
export function retryingModel(
  model: LanguageModelV3,
  options: Omit<RetryOptions, "signal"> & { onTurn?: (turn: LlmTurnRecord) => void },
): { model: LanguageModelV3; attempts: () => number } {
  let attempts = 0;
  const wrapped: LanguageModelV3 = {
    specificationVersion: "v3",
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    async doGenerate(callOptions) {
      const startedAt = new Date();
      const started = performance.now();
      const durationMs = () => Math.round(performance.now() - started);
      try {
        const { value } = await withRetry(
          ({ signal }) => {
            attempts++;
            return Promise.resolve(model.doGenerate({ ...callOptions, abortSignal: signal }));
          },
          { ...options, signal: callOptions.abortSignal },
        );
        const text = value.content.map((c) => (c.type === "text" ? c.text : "")).join("");
        const calls = value.content.flatMap((c) => (c.type === "tool-call" ? [c.toolName] : []));
        const inputTokens = value.usage.inputTokens.total ?? 0;
        const outputTokens = value.usage.outputTokens.total ?? 0;
        options.onTurn?.({
          startedAt,
          durationMs: durationMs(),
          output: calls.length > 0 ? `${text ? `${text}\n` : ""}calls: ${calls.join(", ")}` : text,
          tokenUsage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        });
        return value;
      } catch (error) {
        options.onTurn?.({ startedAt, durationMs: durationMs(), error: describeLlmError(error, options.policy) });
        throw error;
      }
    },
    doStream: (callOptions) => model.doStream(callOptions),
  };
  return { model: wrapped, attempts: () => attempts };
}
