import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AssignedMcpServer } from "../core/task-tools.ts";
import { displayUrl } from "../core/outbound/display-url.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { OutboundRefusedError } from "../core/outbound/policy.ts";
import { withDeadline } from "./deadline.ts";
import type { Env } from "./llm.ts";
import { mcpHeaders } from "./mcp-headers.ts";
import type { JsonSchema } from "./schema-arguments.ts";
import { DependencyUnavailable } from "../core/errors.ts";
import { traceparentOf } from "../platform/telemetry/trace-context.ts";

/** An MCP server that cannot be used for the task: down, slow, refused, or not speaking MCP. */
export class McpServerError extends DependencyUnavailable {
  override name = "McpServerError";

  constructor(message: string, options: { cause?: unknown } = {}) {
    super("MCP server", message, options);
  }
}

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

/** One tool call's result as the model reads it; `isError` when the server reported a failure. */
export interface McpCallResult {
  text: string;
  isError: boolean;
}

const CLIENT_INFO = { name: "kubecrew-runner", version: "1" };
/** Pages of tools/list read at most (a server that pages forever must not hang the task). */
const MAX_LIST_PAGES = 20;
/** Closing never holds the task up longer than this. */
const CLOSE_TIMEOUT_MS = 2_000;

function refusal(error: unknown, depth = 0): OutboundRefusedError | undefined {
  if (error instanceof OutboundRefusedError) return error;
  if (!(error instanceof Error) || depth > 5) return undefined;
  return refusal(error.cause, depth + 1);
}

/** One line, at most 300 characters: a server's garbage answer must not flood the outcome. */
function shortReason(error: unknown): string {
  const refused = refusal(error);
  if (refused) return `refused by the outbound URL policy: ${refused.message}`;
  const text = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
  const full = cause && !text.includes(cause) ? `${text} (${cause})` : text;
  return full.length > 300 ? `${full.slice(0, 300)}…` : full;
}

function contentText(result: CallToolResult): string {
  const parts = result.content.map((part) => {
    switch (part.type) {
      case "text":
        return part.text;
      case "image":
      case "audio":
        return `[${part.type} ${part.mimeType}, ${part.data.length} base64 characters]`;
      case "resource":
        return "text" in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
      case "resource_link":
        return `[resource link ${part.uri}${part.name ? ` (${part.name})` : ""}]`;
      default:
        return JSON.stringify(part);
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join("\n");
}

/**
 * One MCP session with one server for one task, through the official MCP TypeScript SDK client over streamable HTTP
 * or SSE. Every request goes through the runner's outbound fetch (the URL policy), and connecting, listing tools
 * and each call end after the server's `timeoutSeconds`. `close()` always ends the session (and never throws).
 */
export class McpSession {
  readonly server: AssignedMcpServer;
  readonly tools: McpTool[];
  private readonly client: Client;
  private readonly transport: Transport;
  private closed = false;

  private constructor(server: AssignedMcpServer, client: Client, transport: Transport, tools: McpTool[]) {
    this.server = server;
    this.client = client;
    this.transport = transport;
    this.tools = tools;
  }

  private static where(server: AssignedMcpServer): string {
    return `MCP server "${server.name}" (${displayUrl(server.url)})`;
  }

  /** Connects, initializes and lists the tools the assignment allows; throws McpServerError naming the server. */
  static async open(
    server: AssignedMcpServer,
    deps: { fetch: Fetch; env: Env; signal?: AbortSignal },
  ): Promise<McpSession> {
    const where = McpSession.where(server);
    const timeoutMs = server.timeoutSeconds * 1000;
    const headers = mcpHeaders(server, deps.env);
    const url = new URL(server.url);
    const requestInit: RequestInit = { headers };
    // The SSE transport reports a failed stream without its cause: the refusal is kept here to be named.
    let refused: OutboundRefusedError | undefined;
    const fetch: Fetch = async (input, init) => {
      try {
        return await deps.fetch(input, withTraceparent(init));
      } catch (error) {
        refused ??= refusal(error);
        throw error;
      }
    };
    const transport =
      server.transport === "sse"
        ? new SSEClientTransport(url, { fetch, requestInit })
        : new StreamableHTTPClientTransport(url, {
            fetch,
            requestInit,
            reconnectionOptions: {
              maxRetries: 0,
              initialReconnectionDelay: 1_000,
              maxReconnectionDelay: 1_000,
              reconnectionDelayGrowFactor: 1,
            },
          });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    // The SDK's own request timeout is a backstop: the deadline (the same for every transport and stage) comes first.
    const options = { timeout: timeoutMs + 1_000, signal: deps.signal };
    const step = <T>(work: Promise<T>) =>
      withDeadline(work, timeoutMs, `no answer within ${server.timeoutSeconds} s`, deps.signal);
    let stage = "cannot connect";
    try {
      await step(client.connect(transport, options));
      stage = "cannot list its tools";
      const listed: McpTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = await step(client.listTools(cursor ? { cursor } : {}, options));
        listed.push(...result.tools.map((t) => ({ ...t, inputSchema: t.inputSchema as JsonSchema })));
        cursor = result.nextCursor;
        if (!cursor) break;
      }
      const allowed = server.tools;
      if (allowed) {
        const missing = allowed.filter((name) => !listed.some((t) => t.name === name));
        if (missing.length > 0) {
          stage = "is missing tools";
          throw new Error(`it offers no tool ${missing.map((n) => `"${n}"`).join(", ")}`);
        }
      }
      const tools = allowed ? listed.filter((t) => allowed.includes(t.name)) : listed;
      return new McpSession(server, client, transport, tools);
    } catch (error) {
      await McpSession.shutDown(client, transport);
      if (deps.signal?.aborted) throw deps.signal.reason;
      const reason = shortReason(refused ?? error);
      const text = stage === "is missing tools" ? `${where}: ${reason}` : `${where}: ${stage}: ${reason}`;
      throw new McpServerError(text, { cause: error });
    }
  }

  /** Calls one tool; a failure (the server's isError, a timeout, a broken connection) throws McpServerError. */
  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    const timeoutMs = this.server.timeoutSeconds * 1000;
    try {
      const result = (await withDeadline(
        this.client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs + 1_000, signal }),
        timeoutMs,
        `no answer within ${this.server.timeoutSeconds} s`,
        signal,
      )) as CallToolResult;
      return { text: contentText(result), isError: result.isError === true };
    } catch (error) {
      throw new McpServerError(`${McpSession.where(this.server)}: tool "${name}" failed: ${shortReason(error)}`, {
        cause: error,
      });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await McpSession.shutDown(this.client, this.transport);
  }

  /** Ends the session on the server where the transport can (streamable HTTP's DELETE), then closes the client. */
  private static async shutDown(client: Client, transport: Transport): Promise<void> {
    const end = async () => {
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
        await transport.terminateSession().catch(() => undefined);
      }
      await client.close().catch(() => undefined);
    };
    await withDeadline(end(), CLOSE_TIMEOUT_MS, "close").catch(() => transport.close().catch(() => undefined));
  }
}

/**
 * The request with the active span's W3C `traceparent` (the tool call's, while one runs): a server that traces — the
 * integrations service behind an agent's apps — continues the task's trace. Unchanged when tracing is off.
 */
function withTraceparent(init: RequestInit | undefined): RequestInit | undefined {
  const traceparent = traceparentOf();
  if (!traceparent) return init;
  const headers = new Headers(init?.headers);
  headers.set("traceparent", traceparent);
  return { ...init, headers };
}
