import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An LLM API test server on loopback: OpenAI Chat Completions (`POST /v1/chat/completions`, non-streaming, with
 * usage) and Anthropic Messages (`POST /v1/messages`). Each test scripts it with a queue of replies (an answer, an
 * HTTP error with headers such as Retry-After, a slow reply, a reset connection); when the queue is empty it answers
 * `defaultAnswer`. Every request is recorded, so tests can assert the prompt and the credentials sent.
 */

export interface FixtureUsage {
  inputTokens: number;
  outputTokens: number;
}

export type FixtureReply =
  | { kind: "answer"; text: string; usage?: FixtureUsage; delayMs?: number }
  | { kind: "error"; status: number; message: string; headers?: Record<string, string>; delayMs?: number }
  | { kind: "raw"; status: number; body: string; headers?: Record<string, string>; delayMs?: number }
  /** Closes the connection without an answer (the client sees a connection reset). */
  | { kind: "reset" };

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

export async function startLlmFixture(): Promise<LlmFixture> {
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
      const reply = queue.shift() ?? { kind: "answer", ...fixture.defaultAnswer };
      if (reply.kind === "reset") {
        req.socket.destroy();
        return;
      }
      const respond = () => {
        if (res.destroyed) return;
        const model = typeof body.model === "string" ? body.model : "fixture-model";
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
        } else {
          send(res, reply.status, reply.body, reply.headers);
        }
      };
      if (reply.delayMs) setTimeout(respond, reply.delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fixture.baseURL = `http://127.0.0.1:${port}/v1`;
  fixture.stop = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return fixture;
}
