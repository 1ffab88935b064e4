/**
 * The `mock` LLM provider: a TEST provider, like LiteLLM's `mock_response`. It never calls a model; it answers
 * deterministically with a clearly labelled text, so crews run offline (the embedded default without a configured
 * LLM, CI, controller tests) through exactly the code path a real provider takes: it is a real AI SDK language model
 * (specification v3), called by `generateText`.
 *
 * The answer: `[mock llm] Answer to task "<task>" ...` with a short digest of the prompt (sha256, 12 hex digits), the
 * prompt's word count and the first line of the task. Token usage counts words: input = words of the prompt,
 * output = words of the answer.
 *
 * The model name selects behaviour for tests; parts joined by `+` combine (e.g. `sleep-500+fail`):
 * - `fail`          → the call throws `mock llm: failure requested` (not retried: it is not a transient error)
 * - `sleep-<ms>`    → waits <ms> milliseconds before answering (an abort, e.g. the request timeout, cuts it short)
 * - `size-<bytes>`  → the answer is exactly <bytes> bytes long (ASCII), e.g. `size-204800` → 200 KiB
 * - `echo`          → the answer is the whole prompt (system, then user message), to check what an agent received
 * - `call-tools`    → on its first turn it calls every tool it is offered once, with arguments made up from each
 *                     tool's JSON schema (`schema-arguments.ts`: required fields only, strings "x", numbers their
 *                     minimum or 0, booleans false, enums their first value); on its next turn it answers with a text
 *                     holding every tool result verbatim, each cut at 500 characters. Offered no tools, it answers
 *                     as `mock` does.
 * Any other name (`mock`, `default`, ...) gives the plain labelled answer.
 *
 * Offered the delegation tools (a hierarchical crew's manager, an agent with allowDelegation), whatever the name
 * but `call-tools`, its first turn hands the task's first line to the first coworker (`delegate_work`) and its next
 * answers with what the coworker returned, so a hierarchical crew runs offline too.
 *
 * Asked for structured output (a JSON response format with a schema: a task's `outputJson`), whatever the name, the
 * answer is a JSON object made up from the schema as `call-tools` makes up arguments; asked to judge an answer (an
 * LLM guardrail, `providerOptions.mock.guardrail`), it finds the answer complies. So crews with structured outputs
 * and guardrails run offline too.
 */
import { createHash } from "node:crypto";
import { abortableSleep } from "./abortable-sleep.ts";
import { DELEGATE_WORK_TOOL } from "./delegation-tools.ts";
import { generatedModel, type CallOptions, type GenerateResult, type LanguageModelV3 } from "./generated-model.ts";
import { TASK_LABEL } from "./prompt.ts";
import { argumentsFromSchema, valueFromSchema, type JsonSchema } from "./schema-arguments.ts";

/** The provider specification version ai@6 calls natively (generated-model.ts). */
export type { LanguageModelV3 };

export const MOCK_PROVIDER_ID = "mock";
export const MOCK_FAILURE_MESSAGE = "mock llm: failure requested";

/** Per-call options the runner passes as `providerOptions.mock`, so the answer can name its task. */
export interface MockProviderOptions {
  task?: string;
  /** The call is an LLM guardrail's check (runner/llm-guardrail.ts): the mock passes the answer. */
  guardrail?: boolean;
}

/** What the mock answers an LLM guardrail's check with: the answer complies. */
export const MOCK_GUARDRAIL_VERDICT = { valid: true, feedback: "" };

export interface MockBehaviour {
  sleepMs: number;
  fail: boolean;
  sizeBytes: number | undefined;
  echo: boolean;
  callTools: boolean;
}

/** How much of each tool result the `call-tools` model quotes in its answer. */
export const CALL_TOOLS_QUOTE_CHARS = 500;

export function mockBehaviour(modelId: string): MockBehaviour {
  const behaviour: MockBehaviour = {
    sleepMs: 0,
    fail: false,
    sizeBytes: undefined,
    echo: false,
    callTools: false,
  };
  for (const part of modelId.split("+")) {
    const sleep = /^sleep-(\d+)$/.exec(part);
    const size = /^size-(\d+)$/.exec(part);
    if (part === "fail") behaviour.fail = true;
    else if (part === "echo") behaviour.echo = true;
    else if (part === "call-tools") behaviour.callTools = true;
    else if (sleep) behaviour.sleepMs = Number(sleep[1]);
    else if (size) behaviour.sizeBytes = Number(size[1]);
  }
  return behaviour;
}

export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

function promptText(prompt: CallOptions["prompt"]): string {
  return prompt
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => (part.type === "text" ? part.text : "")).join(""),
    )
    .join("\n\n");
}

function lastUserText(prompt: CallOptions["prompt"]): string {
  const user = prompt.findLast((m) => m.role === "user");
  if (!user || typeof user.content === "string") return "";
  return user.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function exactly(bytes: number, head: string): string {
  if (head.length >= bytes) return head.slice(0, bytes);
  const filler = "lorem ipsum dolor sit amet ";
  return (head + filler.repeat(Math.ceil((bytes - head.length) / filler.length))).slice(0, bytes);
}

/** The text the mock model answers with; deterministic in the model name, the prompt and the task name. */
export function mockAnswer(modelId: string, prompt: CallOptions["prompt"], task: string | undefined): string {
  const behaviour = mockBehaviour(modelId);
  const text = promptText(prompt);
  if (behaviour.echo) return text;
  const label = task ? `task "${task}"` : "an unnamed task";
  const digest = createHash("sha256").update(text).digest("hex").slice(0, 12);
  // The task message starts with the task's description after TASK_LABEL (runner/prompt.ts).
  const firstLine = lastUserText(prompt).split("\n")[0] ?? "";
  const taskLine = (firstLine.startsWith(TASK_LABEL) ? firstLine.slice(TASK_LABEL.length) : firstLine).slice(0, 160);
  const answer =
    `[mock llm] Answer to ${label} (prompt sha256:${digest}, ${countWords(text)} words). ` +
    `This text comes from the mock test provider, not from a model.${taskLine ? ` Task: ${taskLine}` : ""}`;
  return behaviour.sizeBytes === undefined ? answer : exactly(behaviour.sizeBytes, answer + " ");
}

type ToolOutput = Extract<
  Extract<CallOptions["prompt"][number], { role: "tool" }>["content"][number],
  { type: "tool-result" }
>["output"];

/** A tool result as the model reads it: text as it is, anything else as JSON. */
function toolOutputText(output: ToolOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    default:
      return JSON.stringify(output);
  }
}

/** `call-tools`: every offered tool once, then an answer quoting every result. */
function callToolsTurn(options: CallOptions): GenerateResult["content"] | undefined {
  const tools = (options.tools ?? []).filter((t) => t.type === "function");
  if (tools.length === 0) return undefined;
  const results = options.prompt.flatMap((m) =>
    m.role === "tool" ? m.content.filter((p) => p.type === "tool-result") : [],
  );
  if (results.length === 0) {
    return tools.map((t, i) => ({
      type: "tool-call",
      toolCallId: `call-${i + 1}`,
      toolName: t.name,
      input: JSON.stringify(argumentsFromSchema(t.inputSchema as JsonSchema)),
    }));
  }
  const quoted = results.map(
    (r) => `Tool ${r.toolName} returned: ${toolOutputText(r.output).slice(0, CALL_TOOLS_QUOTE_CHARS)}`,
  );
  return [{ type: "text", text: `[mock llm] Answer from ${results.length} tool results.\n\n${quoted.join("\n\n")}` }];
}

/** Delegation: the task's first line to the first coworker, once; then an answer quoting what came back. */
function delegationTurn(options: CallOptions): GenerateResult["content"] | undefined {
  const delegate = (options.tools ?? []).find((t) => t.type === "function" && t.name === DELEGATE_WORK_TOOL);
  if (!delegate || delegate.type !== "function") return undefined;
  const results = options.prompt.flatMap((m) =>
    m.role === "tool" ? m.content.filter((p) => p.type === "tool-result") : [],
  );
  if (results.length === 0) {
    const args = argumentsFromSchema(delegate.inputSchema as JsonSchema) as Record<string, unknown>;
    const firstLine = lastUserText(options.prompt).split("\n")[0] ?? "";
    const task = firstLine.startsWith(TASK_LABEL) ? firstLine.slice(TASK_LABEL.length) : firstLine;
    const input = { ...args, task: task || "the task", context: "Delegated by the mock provider." };
    return [
      { type: "tool-call", toolCallId: "delegate-1", toolName: DELEGATE_WORK_TOOL, input: JSON.stringify(input) },
    ];
  }
  const quoted = results.map((r) => toolOutputText(r.output).slice(0, CALL_TOOLS_QUOTE_CHARS));
  return [{ type: "text", text: `[mock llm] Answer from a coworker's work.\n\n${quoted.join("\n\n")}` }];
}

/** The JSON text the mock answers a structured-output call with, if the call asks for one. */
function structuredAnswer(options: CallOptions, mockOptions: MockProviderOptions | undefined): string | undefined {
  const format = options.responseFormat;
  if (format?.type !== "json") return undefined;
  if (mockOptions?.guardrail) return JSON.stringify(MOCK_GUARDRAIL_VERDICT);
  return format.schema ? JSON.stringify(valueFromSchema(format.schema as JsonSchema)) : "{}";
}

export function createMockLanguageModel(modelId: string): LanguageModelV3 {
  const generate = async (options: CallOptions): Promise<GenerateResult> => {
    const behaviour = mockBehaviour(modelId);
    if (behaviour.sleepMs > 0) await abortableSleep(behaviour.sleepMs, options.abortSignal);
    if (behaviour.fail) throw new Error(MOCK_FAILURE_MESSAGE);
    const mockOptions = options.providerOptions?.[MOCK_PROVIDER_ID] as MockProviderOptions | undefined;
    const toolTurn = behaviour.callTools ? callToolsTurn(options) : delegationTurn(options);
    const structured = structuredAnswer(options, mockOptions);
    // Tools first (call-tools), then the answer: structured when asked for, else the labelled text.
    const content: GenerateResult["content"] = toolTurn?.some((c) => c.type === "tool-call")
      ? toolTurn
      : structured !== undefined
        ? [{ type: "text", text: structured }]
        : (toolTurn ?? [{ type: "text", text: mockAnswer(modelId, options.prompt, mockOptions?.task) }]);
    const callsTools = content.some((c) => c.type === "tool-call");
    const inputWords = countWords(promptText(options.prompt));
    const outputWords = countWords(content.map((c) => (c.type === "text" ? c.text : "")).join(" "));
    return {
      content,
      finishReason: callsTools ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: inputWords, noCache: inputWords, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: outputWords, text: outputWords, reasoning: undefined },
      },
      response: { modelId, timestamp: new Date(0) },
      warnings: [],
    };
  };

  return generatedModel(MOCK_PROVIDER_ID, modelId, generate);
}
