import type { LanguageModelV3 } from "./mock-model.ts";
import { withRetry, type RetryOptions } from "./retry.ts";

/**
 * The model with each LLM call (each turn of the tool loop) retried on its own by `withRetry`: a transient error in
 * the third turn repeats that turn, not the tools already called. `attempts()` counts the calls made, retries included.
 */
export function retryingModel(
  model: LanguageModelV3,
  options: Omit<RetryOptions, "signal">,
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
      const { value } = await withRetry(
        ({ signal }) => {
          attempts++;
          return Promise.resolve(model.doGenerate({ ...callOptions, abortSignal: signal }));
        },
        { ...options, signal: callOptions.abortSignal },
      );
      return value;
    },
    doStream: (callOptions) => model.doStream(callOptions),
  };
  return { model: wrapped, attempts: () => attempts };
}
