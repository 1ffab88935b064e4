import type { LanguageModel } from "ai";

/** The AI SDK's language model interface, version 3: what the runner's own models (mock, local) implement. */
export type LanguageModelV3 = Extract<LanguageModel, { specificationVersion: "v3" }>;
export type CallOptions = Parameters<LanguageModelV3["doGenerate"]>[0];
export type GenerateResult = Awaited<ReturnType<LanguageModelV3["doGenerate"]>>;
type StreamResult = Awaited<ReturnType<LanguageModelV3["doStream"]>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;

/**
 * A model whose answer is made whole in this process (the mock, a local model): generating is `generate`, and
 * streaming hands over that answer at once — its text as one delta, then its tool calls and the finish.
 */
export function generatedModel(
  provider: string,
  modelId: string,
  generate: (call: CallOptions) => Promise<GenerateResult>,
): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider,
    modelId,
    supportedUrls: {},
    doGenerate: generate,
    async doStream(call) {
      const result = await generate(call);
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      const parts: StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "0" },
        { type: "text-delta", id: "0", delta: text },
        { type: "text-end", id: "0" },
        ...result.content.filter((c) => c.type === "tool-call"),
        { type: "finish", usage: result.usage, finishReason: result.finishReason },
      ];
      return {
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}
