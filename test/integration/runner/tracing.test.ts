import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import { startTracing } from "../../../platform/telemetry/tracing.ts";
import { runAssignedTask } from "../../../runner/command.ts";
import { runnerConfigFromEnv } from "../../../runner/config.ts";
import { FileTaskIO } from "../../../runner/io.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture } from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// The runner's spans for one task: the task under the traceparent it was handed, each LLM call with the GenAI
// semantic conventions' attributes and the fixture's token counts, each MCP tool call under the LLM turn's parent.
// The spans go to an exporter that keeps them (the OTLP export itself: platform/telemetry/tracing.test.ts).
const PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT = `00-${PARENT_TRACE}-00f067aa0ba902b7-01`;
const API_KEY = "sk-test-secret-4c1b9a7e";
const MCP_BEARER = "mcp-bearer-secret-77aa";

function keepingExporter(): SpanExporter & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return { spans, export: (batch, done) => (spans.push(...batch), done({ code: 0 })), shutdown: async () => {} };
}

let llm: LlmFixture;
let mcp: FixtureMcpServer;
beforeAll(async () => {
  llm = await startLlmFixture();
  mcp = await startFixtureMcpServer();
});
afterAll(async () => {
  await llm?.stop();
  await mcp?.stop();
});

async function runTraced(content: boolean) {
  const dir = await mkdtemp(join(tmpdir(), "kubecrew-trace-"));
  const a = testAssignment({ llm: { provider: "openai-compatible", model: "fixture-model", baseURL: llm.baseURL } });
  const assignment = {
    ...a,
    tools: {
      mcpServers: [
        {
          name: "fixture",
          url: mcp.url,
          transport: "streamable-http" as const,
          headers: [{ name: "Authorization", value: `Bearer ${MCP_BEARER}` }],
          timeoutSeconds: 10,
        },
      ],
      allowedHosts: [],
    },
  };
  await writeFile(join(dir, "assignment.json"), JSON.stringify(assignment));
  llm.enqueue(
    toolCalls({ name: "lookup", input: { key: "alpha" } }),
    answer("The value is known.", { inputTokens: 31, outputTokens: 7 }),
  );
  const exporter = keepingExporter();
  const tracing = startTracing({ env: {}, serviceName: "kubecrew-runner", exporter });
  try {
    const config = runnerConfigFromEnv({
      KUBECREW_OPENAI_COMPATIBLE_API_KEY: API_KEY,
      TRACEPARENT,
      KUBECREW_TRACE_CONTENT: String(content),
      KUBECREW_LLM_MAX_RETRIES: "0",
      KUBECREW_OUTBOUND_ALLOW_LOOPBACK: "true",
    });
    const io = new FileTaskIO({ assignment: join(dir, "assignment.json"), outcome: join(dir, "outcome.json") });
    const lines: string[] = [];
    const logger = createLogger({ level: "info" }, { write: (line: string) => void lines.push(line) });
    const result = await runAssignedTask(io, { config, logger });
    expect(result.error).toBeUndefined();
    // The task's log lines name the trace.
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ trace_id: PARENT_TRACE });
  } finally {
    await tracing.stop();
  }
  return exporter.spans;
}

describe("the runner's spans", () => {
  it("form task → LLM call / tool call under the traceparent, with the GenAI token attributes", async () => {
    const spans = await runTraced(false);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([PARENT_TRACE]));
    const task = spans.find((s) => s.name === "task write")!;
    expect(task.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    const chats = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
    expect(chats.map((s) => s.name)).toEqual(["chat fixture-model", "chat fixture-model"]);
    for (const chat of chats) expect(chat.parentSpanContext?.spanId).toBe(task.spanContext().spanId);
    expect(chats[1]!.attributes).toMatchObject({
      "gen_ai.provider.name": "openai-compatible",
      "gen_ai.request.model": "fixture-model",
      "gen_ai.usage.input_tokens": 31,
      "gen_ai.usage.output_tokens": 7,
    });
    const tool = spans.find((s) => s.attributes["gen_ai.operation.name"] === "execute_tool")!;
    expect(tool.name).toBe("execute_tool lookup");
    expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "lookup", "kubecrew.mcp.server": "fixture" });
    expect(tool.parentSpanContext?.spanId).toBe(task.spanContext().spanId);
    // The MCP server receives the tool call's trace context, so a server that traces (the apps' integrations
    // service) continues this trace.
    const traceparents = mcp.requests.map((headers) => headers.traceparent);
    expect(traceparents).toContain(`00-${PARENT_TRACE}-${tool.spanContext().spanId}-01`);
    const everything = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(MCP_BEARER);
    expect(everything).not.toContain("Write a short article"); // the task's prompt
    expect(everything).not.toContain("gen_ai.input.messages");
  });

  it("carries prompts and completions only with KUBECREW_TRACE_CONTENT=true", async () => {
    const spans = await runTraced(true);
    const chats = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
    expect(String(chats[0]!.attributes["gen_ai.input.messages"])).toContain("Write a short article");
    expect(String(chats[1]!.attributes["gen_ai.output.messages"])).toContain("The value is known.");
    const everything = JSON.stringify(spans.map((s) => s.attributes));
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(MCP_BEARER);
  });
});
