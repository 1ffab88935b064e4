import { dynamicTool, jsonSchema, tool, type ToolSet } from "ai";
import { callIdentity } from "./tool-identity.ts";
import type { IdentifyCall } from "./tool-approvals.ts";
import { traceToolCall, type ToolSource } from "./tool-tracing.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import type { Logger } from "../core/logger.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import { appsMcpServer, type AppsSettings } from "./apps-source.ts";
import { HTTP_REQUEST_DESCRIPTION, HTTP_REQUEST_TOOL, httpRequest, httpRequestInput } from "./http-request-tool.ts";
import type { Env } from "./llm.ts";
import { McpSession } from "./mcp-session.ts";
import { inputBytes, MAX_TASK_TOOLS, MAX_TOOL_INPUT_BYTES, truncateForModel } from "./tool-limits.ts";

/** One tool call as the loop saw it (the material of steps). */
export interface ToolCallRecord {
  tool: string;
  input: unknown;
  output: string;
  /** Set when the tool failed; `output` then is what the model was told. */
  error?: string;
  startedAt: Date;
  durationMs: number;
}

export interface TaskToolset {
  /** The AI SDK tools, by the name the model calls them. */
  tools: ToolSet;
  names: string[];
  /** What a call of one of these tools is for `toolPolicy.requireApproval` (see tool-identity.ts). */
  identify: IdentifyCall;
  /** The name of the tool called last, for the error of a loop that ends without an answer. */
  lastTool(): string | undefined;
  /** Ends every MCP session; never throws. */
  close(): Promise<void>;
}

export interface ToolsetDeps {
  fetch: Fetch;
  env: Env;
  signal?: AbortSignal;
  logger: Logger;
  onToolCall?: (call: ToolCallRecord) => void;
  now?: () => number;
  /** The connected apps' MCP endpoint and credential file, for an agent with `apps`. */
  apps?: AppsSettings;
}

/** Tool names as every provider accepts them (OpenAI: [A-Za-z0-9_-]{1,64}). */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

/** A tool failure the model is told about: one line, never more than the output bound. */
function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return truncateForModel(`Tool error: ${message.replace(/\s*\n\s*/g, " ")}`);
}

/**
 * The tools of one task: its MCP servers' tools (one session per server, opened in parallel; the agent's connected
 * apps are one more, see apps-source.ts) and the agent's built-ins, narrowed by the task's `tools`. Every tool is wrapped the same way: the input is bounded, a failure is
 * returned to the model as the tool's result (the loop goes on), the output is cut for the model with a marker.
 * When a server cannot be used the sessions already opened are closed and the error (naming the server) is thrown.
 */
export async function openTaskToolset(assignment: TaskAssignment, deps: ToolsetDeps): Promise<TaskToolset> {
  const now = deps.now ?? (() => performance.now());
  const apps = await appsMcpServer(assignment.agent, deps.apps);
  const servers = [...assignment.tools.mcpServers, ...(apps ? [apps] : [])];
  const opened = await Promise.allSettled(servers.map((server) => McpSession.open(server, deps)));
  const sessions = opened.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const close = async () => {
    await Promise.all(sessions.map((s) => s.close()));
  };
  const failed = opened.find((r) => r.status === "rejected");
  if (failed) {
    await close();
    throw failed.reason;
  }

  const only = assignment.tools.only;
  const offered = (name: string, exposed: string) => !only || only.includes(name) || only.includes(exposed);
  const tools: ToolSet = {};
  let last: string | undefined;
  const sources = new Map<string, ToolSource>();
  const wrap = (name: string, source: ToolSource, run: (input: unknown, signal?: AbortSignal) => Promise<string>) => {
    sources.set(name, source);
    const traced = traceToolCall(name, source, run);
    return async (input: unknown, options: { abortSignal?: AbortSignal }) => {
      last = name;
      const startedAt = new Date();
      const started = now();
      let output: string;
      let error: string | undefined;
      try {
        const bytes = inputBytes(input);
        if (bytes > MAX_TOOL_INPUT_BYTES) {
          throw new Error(`The input is ${bytes} bytes, above the ${MAX_TOOL_INPUT_BYTES} bytes a tool call may carry`);
        }
        output = truncateForModel(await traced(input, options.abortSignal ?? deps.signal));
      } catch (err) {
        if (deps.signal?.aborted) throw err;
        output = errorText(err);
        error = output.replace(/^Tool error: /, "");
      }
      const durationMs = Math.round(now() - started);
      deps.logger.info({ tool: name, durationMs, failed: error !== undefined }, "Tool called");
      deps.onToolCall?.({ tool: name, input, output, ...(error ? { error } : {}), startedAt, durationMs });
      return output;
    };
  };

  for (const session of sessions) {
    for (const t of session.tools) {
      let exposed = safeName(t.name);
      if (tools[exposed]) exposed = safeName(`${session.server.name}_${t.name}`);
      for (let i = 2; tools[exposed]; i++)
        exposed = safeName(`${session.server.name}_${t.name}`).slice(0, 60) + `_${i}`;
      if (!offered(t.name, exposed)) continue;
      tools[exposed] = dynamicTool({
        description: t.description ?? `Tool ${t.name} of MCP server ${session.server.name}`,
        inputSchema: jsonSchema(t.inputSchema as Parameters<typeof jsonSchema>[0]),
        execute: wrap(exposed, { server: session.server.name, tool: t.name }, async (input, signal) => {
          const result = await session.call(t.name, (input ?? {}) as Record<string, unknown>, signal);
          if (result.isError) throw new Error(result.text || "the tool reported an error");
          return result.text;
        }),
      });
    }
  }
  if (assignment.agent.tools.includes(HTTP_REQUEST_TOOL) && offered(HTTP_REQUEST_TOOL, HTTP_REQUEST_TOOL)) {
    const allowedHosts = assignment.tools.allowedHosts;
    tools[HTTP_REQUEST_TOOL] = tool({
      description: HTTP_REQUEST_DESCRIPTION,
      inputSchema: httpRequestInput,
      execute: wrap(HTTP_REQUEST_TOOL, { builtIn: HTTP_REQUEST_TOOL }, (input, signal) =>
        httpRequest(httpRequestInput.parse(input), { fetch: deps.fetch, allowedHosts, signal }),
      ),
    });
  }
  const names = Object.keys(tools);
  if (names.length > MAX_TASK_TOOLS) {
    await close();
    throw new Error(
      `The task is offered ${names.length} tools, more than ${MAX_TASK_TOOLS}: narrow them with tools allow-lists or the task's tools`,
    );
  }
  const identify: IdentifyCall = (name, input) => {
    const source = sources.get(name);
    return source && callIdentity(source, input);
  };
  return { tools, names, identify, lastTool: () => last, close };
}
