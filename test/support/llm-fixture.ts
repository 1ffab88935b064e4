import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An LLM API test server on loopback: OpenAI Chat Completions (`POST /v1/chat/completions`, non-streaming, with
 * usage) and Anthropic Messages (`POST /v1/messages`). Each test scripts it with a queue of replies (an answer, tool
 * calls, an answer quoting the tool results the request carries, an HTTP error with headers such as Retry-After, a
 * slow reply, a reset connection); when the queue is empty it answers `defaultAnswer`. Every request is recorded, so
 * tests can assert the prompt, the tools offered, the tool results sent back and the credentials. A Chat Completions
 * request whose `response_format` OpenAI would refuse gets OpenAI's 400 (responseFormatProblem).
 */
import { argumentsFromSchema, type JsonSchema } from "../../runner/schema-arguments.ts";

export interface FixtureUsage {
  inputTokens: number;
  outputTokens: number;
}

export type FixtureReply =
  | { kind: "answer"; text: string; usage?: FixtureUsage; delayMs?: number }
  | { kind: "error"; status: number; message: string; headers?: Record<string, string>; delayMs?: number }
  | { kind: "raw"; status: number; body: string; headers?: Record<string, string>; delayMs?: number }
  /** Closes the connection without an answer (the client sees a connection reset). */
  | { kind: "reset" }
  /** Tool calls in the provider's format; `input` undefined: arguments made up from the offered tool's schema. */
  | { kind: "tool-calls"; calls: { name: string; input?: Record<string, unknown> }[] }
  /** Calls every offered tool (as the `call-tools` mock does); with tool results in the request, quotes them. */
  | { kind: "call-tools" }
  /** An answer whose text quotes every tool result the request carries: `Tool <name> returned: <text>`. */
  | { kind: "quote-tool-results" };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  api: "openai" | "anthropic" | "unknown";
}

export const answer = (text: string, usage?: FixtureUsage, delayMs?: number): FixtureReply => ({
  kind: "answer",
  text,
  usage,
  delayMs,
});
export const httpError = (status: number, message: string, headers?: Record<string, string>): FixtureReply => ({
  kind: "error",
  status,
  message,
  headers,
});
export const reset = (): FixtureReply => ({ kind: "reset" });
export const toolCalls = (...calls: { name: string; input?: Record<string, unknown> }[]): FixtureReply => ({
  kind: "tool-calls",
  calls,
});
export const quoteToolResults = (): FixtureReply => ({ kind: "quote-tool-results" });
export const callTools = (): FixtureReply => ({ kind: "call-tools" });

export interface OfferedTool {
  name: string;
  description?: string;
  schema: JsonSchema;
}

/** The tools a request offered, whatever the API's shape. */
export function toolsOffered(body: Record<string, unknown>): OfferedTool[] {
  const tools = (body.tools ?? []) as Record<string, unknown>[];
  return tools.map((t) => {
    const fn = t.function as { name: string; description?: string; parameters: JsonSchema } | undefined;
    if (fn) return { name: fn.name, description: fn.description, schema: fn.parameters };
    return {
      name: t.name as string,
      description: t.description as string | undefined,
      schema: t.input_schema as JsonSchema,
    };
  });
}

export interface SentToolResult {
  /** The tool's name (from the call the result answers). */
  name: string;
  text: string;
}

/** The tool results a request sends back to the model, in order, whatever the API's shape. */
export function toolResultsSent(body: Record<string, unknown>): SentToolResult[] {
  const messages = (body.messages ?? []) as Record<string, unknown>[];
  const names = new Map<string, string>();
  const results: SentToolResult[] = [];
  for (const m of messages) {
    if (m.role === "assistant" && Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls as { id: string; function: { name: string } }[]) names.set(c.id, c.function.name);
    }
    if (m.role === "tool") {
      results.push({ name: names.get(m.tool_call_id as string) ?? "?", text: textOf(m.content) });
    }
    if (Array.isArray(m.content)) {
      for (const part of m.content as Record<string, unknown>[]) {
        if (part.type === "tool_use") names.set(part.id as string, part.name as string);
        if (part.type === "tool_result") {
          results.push({ name: names.get(part.tool_use_id as string) ?? "?", text: textOf(part.content) });
        }
      }
    }
  }
  return results;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("");
  return JSON.stringify(content);
}

export interface LlmFixture {
  /** Base URL to give providers: `http://127.0.0.1:<port>/v1`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Queues replies, served in order, one per request. */
  enqueue(...replies: FixtureReply[]): void;
  /** The answer given when the queue is empty. */
  defaultAnswer: { text: string; usage: FixtureUsage };
  stop(): Promise<void>;
}

function wordCount(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

function openAiCompletion(model: string, text: string, usage: FixtureUsage) {
  return {
    id: "chatcmpl-fixture",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
  };
}

function anthropicMessage(model: string, text: string, usage: FixtureUsage) {
  return {
    id: "msg_fixture",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
  };
}

interface FixtureCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

function openAiToolCalls(model: string, calls: FixtureCall[], usage: FixtureUsage) {
  const completion = openAiCompletion(model, "", usage);
  completion.choices = [
    {
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.input) },
        })),
      } as never,
      finish_reason: "tool_calls",
    },
  ];
  return completion;
}

function anthropicToolUse(model: string, calls: FixtureCall[], usage: FixtureUsage) {
  return {
    ...anthropicMessage(model, "", usage),
    content: calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input })),
    stop_reason: "tool_use",
  };
}

function errorBody(api: RecordedRequest["api"], status: number, message: string) {
  if (api === "anthropic") {
    const type = status === 429 ? "rate_limit_error" : status >= 500 ? "api_error" : "invalid_request_error";
    return { type: "error", error: { type, message } };
  }
  const type = status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: null } };
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body);
}

const RESPONSE_FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Where a strict JSON schema breaks OpenAI's strict-mode rules (every object closed, every property required). */
function strictSchemaProblem(schema: Record<string, unknown>, where: string): string | undefined {
  if (schema.type === "object" || schema.properties) {
    if (schema.additionalProperties !== false) {
      return `In context=(${where}), 'additionalProperties' is required to be supplied and to be false.`;
    }
    const properties = Object.keys((schema.properties ?? {}) as object);
    const required = (schema.required ?? []) as string[];
    const missing = properties.find((p) => !required.includes(p));
    if (missing)
      return `In context=(${where}), 'required' is required to include every key in properties. Missing '${missing}'.`;
  }
  for (const [key, child] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    const problem = strictSchemaProblem(child, `${where}${where ? ", " : ""}'properties', '${key}'`);
    if (problem) return problem;
  }
  if (schema.items && typeof schema.items === "object") {
    return strictSchemaProblem(schema.items as Record<string, unknown>, `${where}${where ? ", " : ""}'items'`);
  }
  return undefined;
}

/**
 * What OpenAI's Chat Completions API refuses in a request's `response_format` (a 400 invalid_request_error there, so
 * here too): an unknown type, a json_schema without a valid name or schema, a strict schema strict mode cannot take,
 * or JSON mode without the word "json" in the messages.
 */
export function responseFormatProblem(body: Record<string, unknown>): string | undefined {
  const format = body.response_format as Record<string, unknown> | undefined;
  if (format === undefined) return undefined;
  if (format.type === "text") return undefined;
  if (format.type === "json_object") {
    return /json/i.test(JSON.stringify(body.messages ?? []))
      ? undefined
      : "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.";
  }
  if (format.type !== "json_schema")
    return `Invalid value: '${String(format.type)}'. Supported values are: 'json_object', 'json_schema', and 'text'.`;
  const spec = format.json_schema as Record<string, unknown> | undefined;
  if (!spec || typeof spec.name !== "string" || !RESPONSE_FORMAT_NAME.test(spec.name)) {
    return "Invalid 'response_format.json_schema.name': string does not match pattern '^[a-zA-Z0-9_-]+$' (at most 64).";
  }
  if (spec.schema === undefined || typeof spec.schema !== "object" || Array.isArray(spec.schema)) {
    return "Invalid 'response_format.json_schema.schema': expected an object.";
  }
  if (spec.strict !== undefined && spec.strict !== null && typeof spec.strict !== "boolean") {
    return "Invalid type for 'response_format.json_schema.strict': expected a boolean.";
  }
  if (spec.strict === true) {
    const problem = strictSchemaProblem(spec.schema as Record<string, unknown>, "");
    if (problem) return `Invalid schema for response_format '${spec.name}': ${problem}`;
  }
  return undefined;
}

/** The fixture, listening on `host` (loopback unless pods elsewhere must reach it, e.g. on a kind cluster). */
export async function startLlmFixture(host = "127.0.0.1"): Promise<LlmFixture> {
  const queue: FixtureReply[] = [];
  const requests: RecordedRequest[] = [];
  const fixture = {
    baseURL: "",
    requests,
    enqueue: (...replies: FixtureReply[]) => void queue.push(...replies),
    defaultAnswer: { text: "Fixture answer.", usage: { inputTokens: 10, outputTokens: 2 } },
    stop: async () => {},
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!;
      const api = path === "/v1/chat/completions" ? "openai" : path === "/v1/messages" ? "anthropic" : "unknown";
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
      } catch {
        body = {};
      }
      requests.push({ method: req.method ?? "", path, headers: req.headers, body, api });
      if (api === "unknown" || req.method !== "POST") {
        return send(res, 404, JSON.stringify(errorBody("openai", 404, `No route ${req.method} ${path}`)));
      }
      const formatProblem = api === "openai" ? responseFormatProblem(body) : undefined;
      if (formatProblem) return send(res, 400, JSON.stringify(errorBody("openai", 400, formatProblem)));
      const reply: FixtureReply = queue.shift() ?? { kind: "answer", ...fixture.defaultAnswer };
      if (reply.kind === "reset") {
        req.socket.destroy();
        return;
      }
      const respond = () => {
        if (res.destroyed) return;
        const model = typeof body.model === "string" ? body.model : "fixture-model";
        const offered = toolsOffered(body);
        const sent = toolResultsSent(body);
        const quote = () => sent.map((r) => `Tool ${r.name} returned: ${r.text}`).join("\n\n");
        let calls: FixtureCall[] | undefined;
        if (reply.kind === "tool-calls") {
          calls = reply.calls.map((c, i) => ({
            id: `call_${requests.length}_${i + 1}`,
            name: c.name,
            input: c.input ?? argumentsFromSchema(offered.find((t) => t.name === c.name)?.schema),
          }));
        } else if (reply.kind === "call-tools" && sent.length === 0 && offered.length > 0) {
          calls = offered.map((t, i) => ({
            id: `call_${requests.length}_${i + 1}`,
            name: t.name,
            input: argumentsFromSchema(t.schema),
          }));
        }
        if (calls) {
          const usage = { inputTokens: wordCount(JSON.stringify(body)), outputTokens: calls.length };
          const payload =
            api === "anthropic" ? anthropicToolUse(model, calls, usage) : openAiToolCalls(model, calls, usage);
          return send(res, 200, JSON.stringify(payload));
        }
        if (reply.kind === "call-tools" || reply.kind === "quote-tool-results") {
          const text = sent.length > 0 ? `Fixture answer from tool results.\n\n${quote()}` : fixture.defaultAnswer.text;
          const usage = { inputTokens: wordCount(JSON.stringify(body)), outputTokens: wordCount(text) };
          const payload =
            api === "anthropic" ? anthropicMessage(model, text, usage) : openAiCompletion(model, text, usage);
          return send(res, 200, JSON.stringify(payload));
        }
        if (reply.kind === "answer") {
          const usage = reply.usage ?? {
            inputTokens: wordCount(JSON.stringify(body)),
            outputTokens: wordCount(reply.text),
          };
          const payload =
            api === "anthropic"
              ? anthropicMessage(model, reply.text, usage)
              : openAiCompletion(model, reply.text, usage);
          send(res, 200, JSON.stringify(payload));
        } else if (reply.kind === "error") {
          send(res, reply.status, JSON.stringify(errorBody(api, reply.status, reply.message)), reply.headers);
        } else if (reply.kind === "raw") {
          send(res, reply.status, reply.body, reply.headers);
        }
      };
      const delayMs = "delayMs" in reply ? reply.delayMs : undefined;
      if (delayMs) setTimeout(respond, delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  fixture.baseURL = `http://${host.includes(":") ? `[${host}]` : host}:${port}/v1`;
  fixture.stop = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return fixture;
}
