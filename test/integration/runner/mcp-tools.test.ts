import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { clusterPolicy, localPolicy } from "../../../core/outbound/policy.ts";
import type { AssignedMcpServer } from "../../../core/task-tools.ts";
import { DEFAULT_RETRY_POLICY } from "../../../runner/retry.ts";
import { runTask } from "../../../runner/run-task.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import {
  answer,
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";
import {
  startEverythingServer,
  startFixtureMcpServer,
  startGarbageServer,
  startSilentServer,
  type FixtureMcpServer,
  type RunningServer,
} from "../../support/mcp-servers.ts";
import { freePort } from "../../support/ports.ts";

// The runner's tool loop against real MCP servers: the reference "everything" server from npm over streamable HTTP
// and SSE, and one built with the official SDK. The model is the mock provider's call-tools model, or the LLM
// fixture scripted with tool calls.
const { fetch } = createOutboundClient(localPolicy);
const retry = { ...DEFAULT_RETRY_POLICY, maxRetries: 0 };

const server = (fields: Partial<AssignedMcpServer> & { url: string }): AssignedMcpServer => ({
  name: "tools",
  transport: "streamable-http",
  headers: [],
  timeoutSeconds: 10,
  ...fields,
});

function assignment(servers: AssignedMcpServer[], options: { model?: string; maxIter?: number } = {}) {
  const a = testAssignment({ llm: { provider: "mock", model: options.model ?? "call-tools" } });
  return {
    ...a,
    agent: { ...a.agent, maxIter: options.maxIter ?? 20 },
    tools: { mcpServers: servers, allowedHosts: [] },
  };
}

describe.each([
  { transport: "streamableHttp" as const, kind: "streamable-http" as const },
  { transport: "sse" as const, kind: "sse" as const },
])("the everything server over $kind", ({ transport, kind }) => {
  let everything: RunningServer;
  beforeAll(async () => {
    everything = await startEverythingServer(transport);
  });
  afterAll(() => everything?.stop());

  it("calls its tools in the loop and answers with their results", async () => {
    const calls: string[] = [];
    const outcome = await runTask(
      assignment([server({ name: "everything", url: everything.url, transport: kind, tools: ["echo", "get-sum"] })]),
      { env: {}, fetch, retry, onToolCall: (c) => calls.push(c.tool) },
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toContain("Tool echo returned: Echo: x");
    expect(outcome.output).toContain("Tool get-sum returned: The sum of 0 and 0 is 0.");
    expect(calls.sort()).toEqual(["echo", "get-sum"]);
  });
});

describe("an MCP server built with the official SDK", () => {
  let mcp: FixtureMcpServer;
  let llm: LlmFixture;
  beforeAll(async () => {
    mcp = await startFixtureMcpServer();
    llm = await startLlmFixture();
  });
  afterAll(async () => {
    await mcp?.stop();
    await llm?.stop();
  });

  it("sends the configured headers, Secrets from their variable, and never reports them", async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: "trace" },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const opened = mcp.sessions.opened;
    const outcome = await runTask(
      assignment([
        server({
          url: mcp.url,
          tools: ["lookup"],
          headers: [
            { name: "X-Team", value: "crew-7" },
            { name: "Authorization", valueFrom: { secretKeyRef: { name: "mcp-token", key: "token" } } },
          ],
        }),
      ]),
      { env: { KUBECREW_SECRET_MCP_TOKEN_TOKEN: "Bearer s3cr3t-token" }, fetch, retry, logger },
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toContain("Tool lookup returned: value of x");
    const sent = mcp.requests.slice(-3);
    expect(sent.every((h) => h.authorization === "Bearer s3cr3t-token" && h["x-team"] === "crew-7")).toBe(true);
    expect(JSON.stringify(outcome)).not.toContain("s3cr3t");
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.join("")).not.toContain("s3cr3t");
    // One session for the task, ended when it finished.
    expect(mcp.sessions.opened).toBe(opened + 1);
    expect(mcp.sessions.closed).toBe(mcp.sessions.opened);
  });

  it("fails the task naming the variable when a header's Secret is missing, before connecting", async () => {
    const before = mcp.requests.length;
    const outcome = await runTask(
      assignment([
        server({
          url: mcp.url,
          headers: [{ name: "Authorization", valueFrom: { secretKeyRef: { name: "t", key: "k" } } }],
        }),
      ]),
      { env: {}, fetch, retry },
    );
    expect(outcome.error).toBe(
      'MCP server "tools": header "Authorization" comes from Secret t/k, but KUBECREW_SECRET_T_K is not set for the runner',
    );
    expect(mcp.requests.length).toBe(before);
  });

  it("returns a tool's error to the model as its result; the task goes on", async () => {
    const outcome = await runTask(assignment([server({ url: mcp.url, tools: ["broken", "lookup"] })]), {
      env: {},
      fetch,
      retry,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toContain("Tool broken returned: Tool error: the broken tool is broken");
    expect(outcome.output).toContain("Tool lookup returned: value of x");
  });

  it("cuts a long tool output for the model, with a marker", async () => {
    llm.enqueue(toolCalls({ name: "huge", input: { size: 100_000 } }), quoteToolResults());
    const outcome = await runTask(
      {
        ...assignment([server({ url: mcp.url, tools: ["huge"] })]),
        agent: {
          ...assignment([]).agent,
          llm: { provider: "openai-compatible", model: "m", baseURL: llm.baseURL },
        },
      },
      { env: {}, fetch, retry },
    );
    expect(outcome.error).toBeUndefined();
    const [result] = toolResultsSent(llm.requests.at(-1)!.body);
    expect(result!.text).toBe(`${"h".repeat(32_768)}\n[truncated: showing the first 32768 of 100000 characters]`);
  });

  it("gives a tool call that outlives timeoutSeconds back to the model as an error", async () => {
    llm.enqueue(toolCalls({ name: "slow", input: { delayMs: 5_000 } }), quoteToolResults());
    const started = performance.now();
    const outcome = await runTask(
      {
        ...assignment([server({ url: mcp.url, tools: ["slow"], timeoutSeconds: 1 })]),
        agent: { ...assignment([]).agent, llm: { provider: "openai-compatible", model: "m", baseURL: llm.baseURL } },
      },
      { env: {}, fetch, retry },
    );
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toMatch(
      /Tool slow returned: Tool error: MCP server "tools" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): tool "slow" failed: no answer within 1 s/,
    );
  });

  it("fails the task at maxIter, naming the last tool", async () => {
    llm.enqueue(toolCalls({ name: "lookup" }), toolCalls({ name: "lookup" }), toolCalls({ name: "broken" }));
    const a = assignment([server({ url: mcp.url })], { maxIter: 3 });
    const outcome = await runTask(
      { ...a, agent: { ...a.agent, llm: { provider: "openai-compatible", model: "m", baseURL: llm.baseURL } } },
      { env: {}, fetch, retry },
    );
    expect(outcome.output).toBeUndefined();
    expect(outcome.error).toBe(
      'The agent reached maxIter (3 LLM turns) without a final answer; the last tool it called was "broken"',
    );
    expect(outcome.tokenUsage.totalTokens).toBeGreaterThan(0);
  });

  it("narrows the offered tools to the task's tools", async () => {
    const a = assignment([server({ url: mcp.url })]);
    const outcome = await runTask({ ...a, tools: { ...a.tools, only: ["lookup"] } }, { env: {}, fetch, retry });
    expect(outcome.output).toContain("Tool lookup returned: value of x");
    expect(outcome.output).not.toContain("Tool broken");
    expect(outcome.output).toMatch(/Answer from 1 tool results/);
  });

  it("fails the task when the server lacks a tool the crew selects", async () => {
    const outcome = await runTask(assignment([server({ url: mcp.url, tools: ["lookup", "nope"] })]), {
      env: {},
      fetch,
      retry,
    });
    expect(outcome.error).toMatch(/^MCP server "tools" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): it offers no tool "nope"$/);
  });
});

describe("an MCP server that cannot be used fails the task with a clear message, never a hang", () => {
  it("down: nothing listens", async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp`;
    const outcome = await runTask(assignment([server({ name: "down", url })]), { env: {}, fetch, retry });
    expect(outcome.error).toMatch(
      /^MCP server "down" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): cannot connect: .*ECONNREFUSED/,
    );
  });

  it.each(["streamable-http" as const, "sse" as const])(
    "slow over %s: no answer within timeoutSeconds",
    async (transport) => {
      const silent = await startSilentServer();
      try {
        const started = performance.now();
        const outcome = await runTask(
          assignment([server({ name: "slow", url: silent.url, transport, timeoutSeconds: 1 })]),
          { env: {}, fetch, retry },
        );
        expect(performance.now() - started).toBeLessThan(4_000);
        expect(outcome.error).toMatch(
          /^MCP server "slow" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): cannot connect: no answer within 1 s$/,
        );
        expect(silent.connections()).toBeGreaterThan(0);
      } finally {
        await silent.stop();
      }
    },
  );

  it.each(["streamable-http" as const, "sse" as const])("garbage over %s: an HTML page", async (transport) => {
    const garbage = await startGarbageServer();
    try {
      const outcome = await runTask(
        assignment([server({ name: "web", url: garbage.url, transport, timeoutSeconds: 2 })]),
        { env: {}, fetch, retry },
      );
      expect(outcome.error).toMatch(/^MCP server "web" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): cannot connect: /);
    } finally {
      await garbage.stop();
    }
  });

  it("refused by the outbound URL policy, before any connection", async () => {
    const silent = await startSilentServer();
    const port = new URL(silent.url).port;
    // A cluster's policy refuses loopback; the name resolves (through the injected resolver) to the listening server.
    const cluster = createOutboundClient(clusterPolicy, {
      resolver: async () => [{ address: "127.0.0.1", family: 4 }],
    });
    try {
      const byName = await runTask(assignment([server({ name: "inside", url: `http://mcp.test:${port}/mcp` })]), {
        env: {},
        fetch: cluster.fetch,
        retry,
      });
      expect(byName.error).toBe(
        `MCP server "inside" (http://mcp.test:${port}/mcp): cannot connect: refused by the outbound URL policy: ` +
          "mcp.test resolves to 127.0.0.1: 127.0.0.1 is a loopback address; calls to it are refused here",
      );
      const metadata = await runTask(
        assignment([server({ name: "meta", url: "http://169.254.169.254/mcp", transport: "sse" })]),
        { env: {}, fetch, retry },
      );
      expect(metadata.error).toBe(
        'MCP server "meta" (http://169.254.169.254/mcp): cannot connect: refused by the outbound URL policy: ' +
          "169.254.169.254 is a cloud metadata address; calls to it are refused",
      );
      expect(silent.connections()).toBe(0);
    } finally {
      await cluster.close();
      await silent.stop();
    }
  });

  it("closes the sessions already open when another server fails", async () => {
    const mcp = await startFixtureMcpServer();
    try {
      const url = `http://127.0.0.1:${await freePort()}/mcp`;
      const outcome = await runTask(
        assignment([server({ name: "good", url: mcp.url }), server({ name: "down", url })]),
        { env: {}, fetch, retry },
      );
      expect(outcome.error).toMatch(/^MCP server "down"/);
      expect(mcp.sessions).toEqual({ opened: 1, closed: 1 });
    } finally {
      await mcp.stop();
    }
  });
});

describe("a task without tools", () => {
  it("makes one LLM call, as before", async () => {
    const llm = await startLlmFixture();
    try {
      llm.enqueue(answer("plain"));
      const a = testAssignment({ llm: { provider: "openai-compatible", model: "m", baseURL: llm.baseURL } });
      const outcome = await runTask(a, { env: {}, fetch, retry });
      expect(outcome.output).toBe("plain");
      expect(llm.requests).toHaveLength(1);
      expect(llm.requests[0]!.body.tools).toBeUndefined();
    } finally {
      await llm.stop();
    }
  });
});
