import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SpanStatusCode } from "@opentelemetry/api";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { localPolicy } from "../core/outbound/policy.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { recordSpans, spanText, type SpanRecorder } from "../test/support/span-recorder.ts";
import { openTaskToolset, type TaskToolset } from "./task-toolset.ts";
import { testAssignment } from "./test-assignment.ts";

// A tool call's span (GenAI's execute_tool) for the two kinds of tools whose calls carry a credential: the built-in
// http_request (a header the model wrote) and a connected app's action (the execution's app credential as the apps
// server's bearer). The span names the tool, and the app, never the credential, the URL or the input.
const HEADER_SECRET = "Bearer http-request-secret-3f9a";
const APP_CREDENTIAL = "app-credential-secret-8c2e";
const QUERY = "quarterly-plan-private-query";

let recorder: SpanRecorder;
const cleanup: (() => Promise<unknown>)[] = [];
beforeEach(() => {
  recorder = recordSpans();
});
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
  await recorder.stop();
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The apps service as a runner sees it: MCP over streamable HTTP, answering only the execution's credential. */
async function startAppsServer(): Promise<{ url: string; received: IncomingHttpHeaders[] }> {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    received.push(req.headers);
    if (req.headers.authorization !== `Bearer ${APP_CREDENTIAL}`) return void res.writeHead(401).end();
    const mcp = new McpServer({ name: "apps-fixture", version: "1.0.0" });
    mcp.registerTool("notion__search", { inputSchema: { query: z.string() } }, async ({ query }) => ({
      content: [{ type: "text", text: `2 pages match ${query.length} characters` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  return { url: `http://${await listen(server)}/v1/mcp`, received };
}

async function open(assignment: Parameters<typeof openTaskToolset>[0], apps?: { url: string }): Promise<TaskToolset> {
  const outbound = createOutboundClient(localPolicy);
  cleanup.push(() => outbound.close());
  let credentialFile: string | undefined;
  if (apps) {
    credentialFile = join(await mkdtemp(join(tmpdir(), "kubecrew-apps-")), "credential");
    await writeFile(credentialFile, APP_CREDENTIAL);
  }
  const toolset = await openTaskToolset(assignment, {
    fetch: outbound.fetch,
    env: {},
    logger: pino({ level: "silent" }),
    ...(apps && credentialFile ? { apps: { url: apps.url, credentialFile } } : {}),
  });
  cleanup.push(() => toolset.close());
  return toolset;
}

const call = (toolset: TaskToolset, name: string, input: unknown) =>
  toolset.tools[name]!.execute!(input as never, { toolCallId: "call-1", messages: [] }) as Promise<string>;

describe("a tool call's span", () => {
  it("of http_request names the built-in, not the URL, the header the model wrote or the body", async () => {
    const received: IncomingHttpHeaders[] = [];
    const host = await listen(
      createServer((req, res) => (received.push(req.headers), res.writeHead(200).end("saved"))),
    );
    const base = testAssignment();
    const toolset = await open({
      ...base,
      agent: { ...base.agent, tools: ["http_request"] },
      tools: { mcpServers: [], allowedHosts: ["127.0.0.1"] },
    });
    const output = await call(toolset, "http_request", {
      method: "POST",
      url: `http://${host}/notes?token=${QUERY}`,
      headers: { Authorization: HEADER_SECRET },
      body: JSON.stringify({ note: QUERY }),
    });
    expect(output).toContain("saved");
    expect(received[0]?.authorization).toBe(HEADER_SECRET); // the call itself carried it

    const [span] = recorder.spans();
    expect(span).toMatchObject({
      name: "execute_tool http_request",
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "http_request",
        "gen_ai.tool.type": "function",
      },
    });
    expect(recorder.spans()).toHaveLength(1);
    const text = spanText(recorder.spans());
    for (const secret of [HEADER_SECRET, "Bearer ", QUERY, host]) expect(text).not.toContain(secret);
  });

  it("of a connected app's action names the app, never the execution's credential or the input", async () => {
    const apps = await startAppsServer();
    const base = testAssignment();
    const toolset = await open({ ...base, agent: { ...base.agent, apps: ["notion/search"] } }, apps);
    expect(toolset.names).toEqual(["notion__search"]);
    expect(await call(toolset, "notion__search", { query: QUERY })).toBe(`2 pages match ${QUERY.length} characters`);
    expect(apps.received.at(-1)?.authorization).toBe(`Bearer ${APP_CREDENTIAL}`);

    const spans = recorder.spans().filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({
      name: "execute_tool notion__search",
      attributes: { "gen_ai.tool.name": "notion__search", "gen_ai.tool.type": "extension", "kubecrew.app": "notion" },
    });
    expect(spans[0]!.attributes).not.toHaveProperty("kubecrew.mcp.server");
    const text = spanText(recorder.spans());
    for (const secret of [APP_CREDENTIAL, "Bearer ", QUERY]) expect(text).not.toContain(secret);
  });

  it("of a failed call is an error naming the error's class, not its message (which may quote the input)", async () => {
    const base = testAssignment();
    const toolset = await open({
      ...base,
      agent: { ...base.agent, tools: ["http_request"] },
      tools: { mcpServers: [], allowedHosts: ["api.example.com"] },
    });
    const output = await call(toolset, "http_request", { method: "GET", url: `http://127.0.0.1:9/?q=${QUERY}` });
    expect(output).toMatch(/^Tool error: /);
    const [span] = recorder.spans();
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: "HttpRequestRefused" });
    expect(spanText(recorder.spans())).not.toContain(QUERY);
  });
});
