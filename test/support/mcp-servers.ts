import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { freePort } from "./ports.ts";
import { waitFor } from "./wait-for.ts";

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * The MCP project's reference "everything" server from npm, as a child process on a free loopback port, over
 * streamable HTTP (`…/mcp`) or SSE (`…/sse`).
 */
export async function startEverythingServer(transport: "streamableHttp" | "sse"): Promise<RunningServer> {
  const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");
  const port = await freePort();
  const child = spawn(process.execPath, [entry, transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitFor(async () => ((await listening(port)) ? true : undefined), 20_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`The everything server did not start: ${stderr}`, { cause: error });
  }
  return {
    url: `http://127.0.0.1:${port}/${transport === "sse" ? "sse" : "mcp"}`,
    stop: async () => {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface FixtureMcpServer extends RunningServer {
  /** Headers of every HTTP request the server received. */
  requests: IncomingHttpHeaders[];
  /** Sessions initialized, and those ended again (by the client's DELETE). */
  sessions: { opened: number; closed: number };
  /** Every tool call (`tools/call`) the server received, in order: the tool's name and its arguments. */
  calls: { tool: string; arguments: unknown }[];
}

async function listen(server: Server, host = "127.0.0.1"): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

/**
 * An MCP server built with the official TypeScript SDK (streamable HTTP, stateful sessions), with tools whose answers
 * tests can predict: `lookup` (required `key`, answers `value of <key>`), `broken` (answers isError), `slow` (answers
 * after `delayMs`), `huge` (answers `size` characters). It listens on `host` (loopback unless pods elsewhere must reach
 * it, e.g. on a kind cluster).
 */
export async function startFixtureMcpServer(host = "127.0.0.1"): Promise<FixtureMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const sessions = { opened: 0, closed: 0 };
  const requests: IncomingHttpHeaders[] = [];
  const calls: FixtureMcpServer["calls"] = [];
  const mcp = () => {
    const server = new McpServer({ name: "kubecrew-fixture", version: "1.0.0" });
    server.registerTool(
      "lookup",
      { description: "Looks a key up", inputSchema: { key: z.string(), verbose: z.boolean().optional() } },
      async ({ key }) => ({ content: [{ type: "text", text: `value of ${key}` }] }),
    );
    server.registerTool("broken", { description: "Always fails", inputSchema: {} }, async () => ({
      content: [{ type: "text", text: "the broken tool is broken" }],
      isError: true,
    }));
    server.registerTool(
      "slow",
      { description: "Answers late", inputSchema: { delayMs: z.number().min(0) } },
      async ({ delayMs }) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return { content: [{ type: "text", text: `slept ${delayMs} ms` }] };
      },
    );
    server.registerTool(
      "huge",
      { description: "A long answer", inputSchema: { size: z.number().int().min(1) } },
      async ({ size }) => ({ content: [{ type: "text", text: "h".repeat(size) }] }),
    );
    return server;
  };
  const http = createServer((req, res) => {
    requests.push(req.headers);
    void (async () => {
      const sessionId = req.headers["mcp-session-id"];
      const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      const body = req.method === "POST" ? await jsonBody(req) : undefined;
      for (const message of [body].flat()) {
        const rpc = message as { method?: string; params?: { name: string; arguments?: unknown } } | undefined;
        if (rpc?.method === "tools/call" && rpc.params)
          calls.push({ tool: rpc.params.name, arguments: rpc.params.arguments });
      }
      if (existing) return existing.handleRequest(req, res, body);
      if (req.method !== "POST") {
        res.writeHead(400).end("no session");
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          sessions.opened++;
          transports.set(id, transport);
        },
        onsessionclosed: (id) => {
          sessions.closed++;
          transports.delete(id);
        },
      });
      await mcp().connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  const port = await listen(http, host);
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/mcp`;
  return { url, requests, sessions, calls, stop: () => close(http) };
}

/** An HTTP server that answers every request with `status` and `body` (an HTML page: not MCP). */
export async function startGarbageServer(status = 200, body = "<html><body>Welcome to nginx!</body></html>") {
  const http = createServer((_req, res) => res.writeHead(status, { "content-type": "text/html" }).end(body));
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => close(http) };
}

/** A server that accepts connections and reads requests but never answers. */
export async function startSilentServer() {
  let connections = 0;
  const http = createServer(() => undefined);
  http.on("connection", () => connections++);
  const port = await listen(http);
  return { url: `http://127.0.0.1:${port}/mcp`, connections: () => connections, stop: () => close(http) };
}
