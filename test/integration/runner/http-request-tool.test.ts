import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { clusterPolicy, localPolicy } from "../../../core/outbound/policy.ts";
import type { TaskAssignment } from "../../../core/task-assignment.ts";
import { DEFAULT_RETRY_POLICY } from "../../../runner/retry.ts";
import { runTask } from "../../../runner/run-task.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";

// The built-in http_request tool, called by a model (the LLM fixture, scripted) against a real HTTP server.
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
let api: Server;
let apiHost: string;
const received: Received[] = [];
let llm: LlmFixture;
const retry = { ...DEFAULT_RETRY_POLICY, maxRetries: 0 };
const { fetch } = createOutboundClient(localPolicy);

beforeAll(async () => {
  api = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === "/big") {
        res.writeHead(200, { "content-type": "text/plain", "content-length": "1000000" });
        res.end("b".repeat(1_000_000));
      } else if (req.url === "/moved") {
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      } else {
        res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
        res.end(JSON.stringify({ method: req.method, path: req.url, body, token: req.headers["x-token"] ?? null }));
      }
    });
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiHost = `127.0.0.1:${(api.address() as AddressInfo).port}`;
  llm = await startLlmFixture();
});
afterAll(async () => {
  api.closeAllConnections();
  await new Promise((resolve) => api.close(resolve));
  await llm.stop();
});
beforeEach(() => {
  received.length = 0;
  llm.requests.length = 0;
});

function assignment(allowedHosts: string[], only?: string[]): TaskAssignment {
  const a = testAssignment({ llm: { provider: "openai-compatible", model: "m", baseURL: llm.baseURL } });
  return {
    ...a,
    agent: { ...a.agent, tools: ["http_request"] },
    tools: { mcpServers: [], allowedHosts, ...(only ? { only } : {}) },
  };
}

/** What the model was told each tool call returned. */
const results = () => toolResultsSent(llm.requests.at(-1)!.body).map((r) => r.text);

describe("http_request", () => {
  it("offers its schema and sends GET, POST, PUT and DELETE with headers and a body", async () => {
    const url = `http://${apiHost}/items`;
    llm.enqueue(
      toolCalls(
        { name: "http_request", input: { method: "GET", url, headers: { "X-Token": "t1" } } },
        {
          name: "http_request",
          input: { method: "POST", url, body: '{"a":1}', headers: { "content-type": "application/json" } },
        },
        { name: "http_request", input: { method: "PUT", url: `${url}/1`, body: "put body" } },
        { name: "http_request", input: { method: "DELETE", url: `${url}/1` } },
      ),
      quoteToolResults(),
    );
    const outcome = await runTask(assignment([apiHost]), { env: {}, fetch, retry });
    expect(outcome.error).toBeUndefined();
    const offered = (
      llm.requests[0]!.body.tools as { function: { name: string; parameters: { required: string[] } } }[]
    ).map((t) => [t.function.name, t.function.parameters.required]);
    expect(offered).toEqual([["http_request", ["method", "url"]]]);
    // The model's calls of one turn run in parallel: their order at the server is not fixed.
    expect(received.map((r) => [r.method, r.url, r.body]).sort()).toEqual([
      ["DELETE", "/items/1", ""],
      ["GET", "/items", ""],
      ["POST", "/items", '{"a":1}'],
      ["PUT", "/items/1", "put body"],
    ]);
    expect(received.find((r) => r.method === "GET")!.headers["x-token"]).toBe("t1");
    expect(results()[0]).toBe(
      'HTTP 200 OK\ncontent-type: application/json\n\n{"method":"GET","path":"/items","body":"","token":"t1"}',
    );
    expect(results()[1]).toMatch(/^HTTP 201 Created\n/);
    expect(outcome.output).toContain(
      'Tool http_request returned: HTTP 200 OK\ncontent-type: application/json\n\n{"method":"GET"',
    );
  });

  it("cuts a long response body for the model, with a marker", async () => {
    llm.enqueue(
      toolCalls({ name: "http_request", input: { method: "GET", url: `http://${apiHost}/big` } }),
      quoteToolResults(),
    );
    const outcome = await runTask(assignment([apiHost]), { env: {}, fetch, retry });
    expect(outcome.error).toBeUndefined();
    const [text] = results();
    expect(text).toMatch(/^HTTP 200 OK\ncontent-type: text\/plain\n\nbbbb/);
    expect(text).toMatch(/\n\[truncated: the response body \(1000000 bytes\) is cut here; 32568 characters shown\]$/);
    expect(text!.length).toBeLessThan(33_000);
  });

  it("refuses hosts outside allowedHosts, telling the model, and the task goes on", async () => {
    llm.enqueue(
      toolCalls({ name: "http_request", input: { method: "GET", url: `http://${apiHost}/items` } }),
      quoteToolResults(),
    );
    const outcome = await runTask(assignment(["api.example.com", "*.example.org"]), { env: {}, fetch, retry });
    expect(outcome.error).toBeUndefined();
    expect(results()).toEqual([
      `Tool error: ${apiHost} is not in the crew's toolPolicy.allowedHosts (allowed: api.example.com, *.example.org)`,
    ]);
    expect(received).toHaveLength(0);
  });

  it("lets the outbound URL policy refuse an allowed host's address, before any connection", async () => {
    // The crew allows the name; it resolves to loopback, which a cluster's policy refuses.
    const cluster = createOutboundClient(clusterPolicy, {
      resolver: async () => [{ address: "127.0.0.1", family: 4 }],
    });
    const port = apiHost.split(":")[1];
    llm.enqueue(
      toolCalls({ name: "http_request", input: { method: "GET", url: `http://internal.test:${port}/items` } }),
      quoteToolResults(),
    );
    // The LLM fixture itself is on loopback: the model is reached through the local client, the tool through the cluster's.
    const outcome = await runTask(assignment(["internal.test"]), {
      env: {},
      fetch: (input, init) =>
        String(input instanceof Request ? input.url : input).startsWith(llm.baseURL)
          ? fetch(input, init)
          : cluster.fetch(input, init),
      retry,
    });
    await cluster.close();
    expect(outcome.error).toBeUndefined();
    expect(results()).toEqual([
      "Tool error: internal.test resolves to 127.0.0.1: 127.0.0.1 is a loopback address; calls to it are refused here",
    ]);
    expect(received).toHaveLength(0);
  });

  it("returns a redirect instead of following it", async () => {
    llm.enqueue(
      toolCalls({ name: "http_request", input: { method: "GET", url: `http://${apiHost}/moved` } }),
      quoteToolResults(),
    );
    await runTask(assignment([apiHost]), { env: {}, fetch, retry });
    expect(results()).toEqual(["HTTP 302 Found\nlocation: http://169.254.169.254/latest/meta-data/\n\n"]);
    expect(received).toHaveLength(1);
  });

  it("refuses an oversized input and a body on GET, as tool results", async () => {
    llm.enqueue(
      toolCalls(
        { name: "http_request", input: { method: "POST", url: `http://${apiHost}/items`, body: "z".repeat(70_000) } },
        { name: "http_request", input: { method: "GET", url: `http://${apiHost}/items`, body: "x" } },
      ),
      quoteToolResults(),
    );
    const outcome = await runTask(assignment([apiHost]), { env: {}, fetch, retry });
    expect(outcome.error).toBeUndefined();
    expect(results()).toEqual([
      expect.stringMatching(/^Tool error: The input is 700\d\d bytes, above the 65536 bytes a tool call may carry$/),
      "Tool error: A GET request has no body",
    ]);
    expect(received).toHaveLength(0);
  });

  it("is not offered when the task's tools leave it out", async () => {
    llm.enqueue(quoteToolResults());
    await runTask(assignment([apiHost], ["something_else"]), { env: {}, fetch, retry });
    expect(llm.requests[0]!.body.tools).toBeUndefined();
  });
});
