/**
 * The `local` LLM provider: a GGUF model run in this process on the CPU by llama.cpp (node-llama-cpp), as an AI SDK
 * language model (specification v3), so a task runs through the same tool loop as with any other provider.
 *
 * A small model does not follow a tool-calling format by itself: every reply is sampled under a JSON-schema grammar
 * (runner/local-grammar.ts), so it always parses. Offered tools, the model replies `{"tool": …, "arguments": …}`
 * (one call, its arguments in the tool's schema) or `{"answer": …}`; asked for structured output, the answer is in
 * the output's schema. A tool already called in the conversation is not offered again, so a model that would call
 * the same tool forever answers instead.
 */
import type { ChatHistoryItem } from "node-llama-cpp";
import { TokenMeter } from "node-llama-cpp";
import { generatedModel, type CallOptions, type GenerateResult, type LanguageModelV3 } from "./generated-model.ts";
import { loadedModel, type LocalModelSettings } from "./local-llama.ts";
import {
  ANSWER_KEY,
  ARGUMENTS_KEY,
  fitToTokens,
  grammarSchema,
  TOOL_KEY,
  turnSchema,
  type OfferedTool,
} from "./local-grammar.ts";

type PromptMessage = CallOptions["prompt"][number];

export const LOCAL_PROVIDER_ID = "local";
/** Tokens a reply may have when the agent's llm sets no maxOutputTokens. */
export const DEFAULT_LOCAL_MAX_TOKENS = 512;
/** How much of a tool's result the model reads (a small model's context is small). */
export const TOOL_RESULT_CHARS = 2000;

export interface LocalModelOptions extends LocalModelSettings {
  /** The name the crew gave (a catalogue name, a reference or a path), reported as the model's id. */
  modelId: string;
  /** Called with each piece of text as it is sampled (the time to the first token, bench/local-model.ts). */
  onTextChunk?: (text: string) => void;
}

function textOf(content: PromptMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

type ToolResultPart = Extract<Extract<PromptMessage, { role: "tool" }>["content"][number], { type: "tool-result" }>;

function toolResultText(part: ToolResultPart): string {
  const output = part.output;
  const text =
    output.type === "text" || output.type === "error-text"
      ? output.value
      : output.type === "json" || output.type === "error-json"
        ? JSON.stringify(output.value)
        : JSON.stringify(output);
  return `Tool ${part.toolName} returned: ${text.slice(0, TOOL_RESULT_CHARS)}`;
}

function toolInstructions(tools: OfferedTool[], descriptions: Map<string, string>): string {
  const lines = tools.map(
    (t) => `- ${t.name}: ${descriptions.get(t.name) ?? ""} Arguments: ${JSON.stringify(t.inputSchema)}`,
  );
  return (
    `You can call one of these tools:\n${lines.join("\n")}\n` +
    `Reply with JSON: {"${TOOL_KEY}": "<name>", "${ARGUMENTS_KEY}": {...}} to call a tool, ` +
    `or {"${ANSWER_KEY}": ...} with your final answer.`
  );
}

/** The AI SDK prompt as node-llama-cpp's chat history (its chat wrapper applies the model's template). */
export function chatHistory(prompt: CallOptions["prompt"], extraSystem: string | undefined): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  for (const message of prompt) {
    if (message.role === "system") history.push({ type: "system", text: message.content });
    else if (message.role === "user") history.push({ type: "user", text: textOf(message.content) });
    else if (message.role === "assistant") {
      const parts = message.content.map((part) =>
        part.type === "text"
          ? part.text
          : part.type === "tool-call"
            ? JSON.stringify({ [TOOL_KEY]: part.toolName, [ARGUMENTS_KEY]: part.input })
            : "",
      );
      history.push({ type: "model", response: [parts.join("")] });
    } else {
      const results = message.content.filter((p): p is ToolResultPart => p.type === "tool-result");
      history.push({ type: "user", text: results.map(toolResultText).join("\n\n") });
    }
  }
  if (extraSystem) {
    const first = history[0];
    if (first?.type === "system") history[0] = { type: "system", text: `${first.text}\n\n${extraSystem}` };
    else history.unshift({ type: "system", text: extraSystem });
  }
  history.push({ type: "model", response: [] });
  return history;
}

/** The tools this turn may call: the offered ones the conversation has not called yet, as toolChoice allows. */
function turnTools(options: CallOptions): { tools: OfferedTool[]; required: boolean } {
  const choice = options.toolChoice;
  if (choice?.type === "none") return { tools: [], required: false };
  const called = new Set(
    options.prompt.flatMap((m) =>
      m.role === "assistant" ? m.content.filter((p) => p.type === "tool-call").map((p) => p.toolName) : [],
    ),
  );
  const tools = (options.tools ?? [])
    .filter((t) => t.type === "function")
    .filter((t) => (choice?.type === "tool" ? t.name === choice.toolName : !called.has(t.name)))
    .map((t) => ({ name: t.name, inputSchema: t.inputSchema }));
  return { tools, required: choice?.type === "required" || choice?.type === "tool" };
}

export function createLocalLanguageModel(options: LocalModelOptions): LanguageModelV3 {
  const { modelId } = options;
  const settings: LocalModelSettings = {
    path: options.path,
    contextSize: options.contextSize,
    threads: options.threads,
  };

  const generate = async (call: CallOptions): Promise<GenerateResult> => {
    const model = await loadedModel(settings);
    const { tools, required } = turnTools(call);
    const structured = call.responseFormat?.type === "json" ? (call.responseFormat.schema ?? {}) : undefined;
    const descriptions = new Map(
      (call.tools ?? []).flatMap((t) => (t.type === "function" ? [[t.name, t.description ?? ""] as const] : [])),
    );
    const maxTokens = call.maxOutputTokens ?? DEFAULT_LOCAL_MAX_TOKENS;
    const turn =
      tools.length > 0
        ? turnSchema(tools, structured, required)
        : structured !== undefined
          ? grammarSchema(structured)
          : undefined;
    // The whole reply must fit its tokens: one cut short does not parse.
    const schema = turn && fitToTokens(turn, maxTokens);
    const history = chatHistory(call.prompt, tools.length > 0 ? toolInstructions(tools, descriptions) : undefined);
    return model.exclusive(async () => {
      const grammar = schema
        ? await model.llama.createGrammarForJsonSchema(schema as Readonly<{ type: "object" }>)
        : undefined;
      const meter = model.chat.sequence.tokenMeter.getState();
      const response = await model.chat.generateResponse(history, {
        ...(grammar ? { grammar } : {}),
        maxTokens,
        ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
        ...(call.abortSignal ? { signal: call.abortSignal } : {}),
        ...(options.onTextChunk ? { onTextChunk: options.onTextChunk } : {}),
      });
      const used = TokenMeter.diff(model.chat.sequence.tokenMeter, meter);
      const cut = response.metadata.stopReason === "maxTokens";
      const content = replyContent(response.response, tools.length > 0, structured !== undefined);
      const callsTool = content.some((c) => c.type === "tool-call");
      return {
        content,
        finishReason: callsTool
          ? { unified: "tool-calls", raw: "tool_call" }
          : cut
            ? { unified: "length", raw: "maxTokens" }
            : { unified: "stop", raw: response.metadata.stopReason },
        usage: {
          inputTokens: {
            total: used.usedInputTokens,
            noCache: used.usedInputTokens,
            cacheRead: undefined,
            cacheWrite: undefined,
          },
          outputTokens: { total: used.usedOutputTokens, text: used.usedOutputTokens, reasoning: undefined },
        },
        response: { modelId, timestamp: new Date() },
        warnings: [],
      };
    });
  };

  return generatedModel(LOCAL_PROVIDER_ID, modelId, generate);
}

let calls = 0;

/**
 * What a reply says: a tool call, or the answer (its text, or its JSON for structured output). A reply cut by the
 * token limit does not parse: it is given as text, and the runner reports what is wrong with it.
 */
export function replyContent(reply: string, withTools: boolean, structured: boolean): GenerateResult["content"] {
  if (!withTools) return [{ type: "text", text: reply }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply);
  } catch {
    return [{ type: "text", text: reply }];
  }
  const object = (parsed ?? {}) as Record<string, unknown>;
  if (typeof object[TOOL_KEY] === "string") {
    return [
      {
        type: "tool-call",
        toolCallId: `local-call-${++calls}`,
        toolName: object[TOOL_KEY],
        input: JSON.stringify(object[ARGUMENTS_KEY] ?? {}),
      },
    ];
  }
  const answer = object[ANSWER_KEY];
  return [{ type: "text", text: structured || typeof answer !== "string" ? JSON.stringify(answer) : answer }];
}
