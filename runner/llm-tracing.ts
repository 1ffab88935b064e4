import { SpanKind, SpanStatusCode, trace, type Attributes, type Tracer } from "@opentelemetry/api";
import {
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
} from "@opentelemetry/semantic-conventions/incubating";
import type { LlmConfig } from "../core/crew.ts";
import { TRACER_NAME } from "../platform/telemetry/tracing.ts";
import type { LanguageModelV3 } from "./mock-model.ts";

type CallOptions = Parameters<LanguageModelV3["doGenerate"]>[0];
type GenerateResult = Awaited<ReturnType<LanguageModelV3["doGenerate"]>>;

export interface LlmTracingOptions {
  /** Prompts and completions on the span (KUBECREW_TRACE_CONTENT=true); off by default, they may hold personal data. */
  content: boolean;
  tracer?: Tracer;
}

/** The GenAI convention's provider names, where kubecrew's differ. */
const PROVIDER_NAMES: Record<string, string> = { openai: "openai", anthropic: "anthropic" };

function usageAttributes(usage: GenerateResult["usage"]): Attributes {
  const attributes: Attributes = {};
  const set = (name: string, value: number | undefined) => {
    if (value !== undefined) attributes[name] = value;
  };
  set(ATTR_GEN_AI_USAGE_INPUT_TOKENS, usage.inputTokens.total);
  set(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.outputTokens.total);
  set(ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.inputTokens.cacheRead);
  set(ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, usage.outputTokens.reasoning);
  return attributes;
}

/**
 * The model with one span per call to its provider (each attempt, so a retried call shows as two), named and
 * attributed as OpenTelemetry's GenAI semantic conventions say: the operation, the provider, the model asked for and
 * the one that answered, the tokens of the call. Headers (the API key) are never read.
 */
export function tracedLanguageModel(
  model: LanguageModelV3,
  llm: LlmConfig,
  options: LlmTracingOptions,
): LanguageModelV3 {
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  const requestAttributes = (call: CallOptions): Attributes => ({
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    [ATTR_GEN_AI_PROVIDER_NAME]: PROVIDER_NAMES[llm.provider] ?? llm.provider,
    [ATTR_GEN_AI_REQUEST_MODEL]: llm.model,
    ...(call.temperature !== undefined ? { [ATTR_GEN_AI_REQUEST_TEMPERATURE]: call.temperature } : {}),
    ...(call.maxOutputTokens !== undefined ? { [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: call.maxOutputTokens } : {}),
    ...(options.content ? { [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify(call.prompt) } : {}),
  });
  return {
    ...model,
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    supportedUrls: model.supportedUrls,
    doGenerate: (call) =>
      tracer.startActiveSpan(
        `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${llm.model}`,
        { kind: SpanKind.CLIENT, attributes: requestAttributes(call) },
        async (span) => {
          try {
            const result = await model.doGenerate(call);
            span.setAttributes({
              ...usageAttributes(result.usage),
              [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [result.finishReason.unified],
              ...(result.response?.modelId ? { [ATTR_GEN_AI_RESPONSE_MODEL]: result.response.modelId } : {}),
              ...(options.content ? { [ATTR_GEN_AI_OUTPUT_MESSAGES]: JSON.stringify(result.content) } : {}),
            });
            return result;
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
            throw error;
          } finally {
            span.end();
          }
        },
      ),
    doStream: (call) =>
      tracer.startActiveSpan(
        `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${llm.model}`,
        { kind: SpanKind.CLIENT, attributes: requestAttributes(call) },
        async (span) => {
          try {
            const result = await model.doStream(call);
            // The usage comes in the stream's finish part; the span ends when the stream does.
            const watched = result.stream.pipeThrough(
              new TransformStream({
                transform(part, controller) {
                  if (part.type === "finish") {
                    span.setAttributes({
                      ...usageAttributes(part.usage),
                      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [part.finishReason.unified],
                    });
                  }
                  controller.enqueue(part);
                },
                flush: () => span.end(),
              }),
            );
            return { ...result, stream: watched };
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
            span.end();
            throw error;
          }
        },
      ),
  };
}
