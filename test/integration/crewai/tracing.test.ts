import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localPolicy } from "../../../core/outbound/policy.ts";
import { runCrewaiTask } from "../../../runner/crewai-runtime.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture } from "../../support/llm-fixture.ts";
import { startCollector, type RunningCollector } from "../../support/otel-collector.ts";
import { waitFor } from "../../support/wait-for.ts";

// The crewai runtime's Python side (the real CrewAI, hack/crewai-venv.sh) exports its own spans to the real
// OpenTelemetry Collector with the OTEL_* variables the pod has, under the TRACEPARENT the runner hands it: the
// agent's invocation, each LLM call with the GenAI attributes and the fixture's token counts, each tool call — no key,
// no prompt unless KUBECREW_TRACE_CONTENT=true.
const SECRET = "sk-crewai-tracing-secret-0123456789";
const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT = "b7ad6b7169203331";
let python: string;
let llm: LlmFixture;
let collector: RunningCollector;
let site: Server;
let siteHost: string;

beforeAll(async () => {
  python = crewaiPython();
  [llm, collector] = await Promise.all([startLlmFixture(), startCollector()]);
  site = createServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("high tide at noon"));
  await new Promise<void>((done) => site.listen(0, "127.0.0.1", done));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all([llm?.stop(), collector?.stop()]);
  await new Promise<void>((done) => site?.close(() => done()));
});

async function runTraced(traceId: string, env: Record<string, string> = {}) {
  const base = testAssignment({ llm: { provider: "openai-compatible", model: "llama3", baseURL: llm.baseURL } });
  const assignment = {
    ...base,
    runtime: "crewai" as const,
    task: { ...base.task, description: "Find when the tide is high; the unique prompt words are quokka-marmalade." },
    agent: { ...base.agent, tools: ["http_request" as const] },
    tools: { mcpServers: [], allowedHosts: [siteHost] },
  };
  const outcome = await runCrewaiTask(assignment, {
    python,
    env: {
      PATH: process.env.PATH,
      KUBECREW_OPENAI_COMPATIBLE_API_KEY: SECRET,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint,
      TRACEPARENT: `00-${traceId}-${PARENT}-01`,
      ...env,
    },
    policy: localPolicy,
  });
  expect(outcome.error).toBeUndefined();
  // Sent before the adapter exits; the collector writes its file every 50 ms.
  const spans = await waitFor(async () => {
    const ours = collector.spans().filter((s) => s.traceId === traceId);
    return ours.some((s) => s.name.startsWith("invoke_agent")) ? ours : undefined;
  }, 15_000);
  return { spans, outcome };
}

describe("the crewai runtime's spans", { timeout: 240_000 }, () => {
  it("are the agent's invocation under the task's span, its LLM calls with their tokens and its tool call", async () => {
    llm.enqueue(
      toolCalls({ name: "http_request", input: { method: "GET", url: `http://${siteHost}/` } }),
      answer("High tide is at noon.", { inputTokens: 130, outputTokens: 7 }),
    );
    const { spans, outcome } = await runTraced(TRACE_ID);
    const agent = spans.find((s) => s.name === "invoke_agent Senior Writer")!;
    expect(agent).toMatchObject({ parentId: PARENT, service: "kubecrew-crewai" });
    expect(agent.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "kubecrew.task": "write" });
    const children = spans.filter((s) => s.parentId === agent.spanId);
    const chats = children.filter((s) => s.name === "chat llama3");
    // The fixture's tool-call reply counts one output token per call; the answer's usage is the one scripted.
    expect(chats.map((c) => c.attributes)).toEqual([
      expect.objectContaining({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai-compatible",
        "gen_ai.request.model": "llama3",
        "gen_ai.usage.output_tokens": 1,
      }),
      expect.objectContaining({ "gen_ai.usage.input_tokens": 130, "gen_ai.usage.output_tokens": 7 }),
    ]);
    const sum = (key: string) => chats.reduce((n, c) => n + Number(c.attributes[key]), 0);
    expect(sum("gen_ai.usage.input_tokens")).toBe(outcome.tokenUsage?.inputTokens);
    expect(sum("gen_ai.usage.output_tokens")).toBe(outcome.tokenUsage?.outputTokens);
    expect(children.filter((s) => s.name === "execute_tool http_request")).toHaveLength(1);
    const exported = JSON.stringify(spans);
    for (const secret of [SECRET, "quokka-marmalade", "high tide at noon", "gen_ai.input.messages"]) {
      expect(exported).not.toContain(secret);
    }
  });

  it("carry the prompt and the answer with KUBECREW_TRACE_CONTENT=true, the key still redacted", async () => {
    llm.enqueue(answer("High tide is at noon.", { inputTokens: 11, outputTokens: 3 }));
    const traceId = "1bf7651916cd43dd8448eb211c80319d";
    const { spans } = await runTraced(traceId, { KUBECREW_TRACE_CONTENT: "true" });
    const chat = spans.find((s) => s.name === "chat llama3")!;
    expect(String(chat.attributes["gen_ai.input.messages"])).toContain("quokka-marmalade");
    expect(String(chat.attributes["gen_ai.output.messages"])).toContain("High tide is at noon.");
    expect(JSON.stringify(spans)).not.toContain(SECRET);
  });

  it("are not made with OTEL_SDK_DISABLED=true, though the endpoint is set", async () => {
    llm.enqueue(answer("Noon."));
    const traceId = "2".repeat(32);
    const base = testAssignment({ llm: { provider: "openai-compatible", model: "llama3", baseURL: llm.baseURL } });
    const outcome = await runCrewaiTask(
      { ...base, runtime: "crewai" },
      {
        python,
        env: {
          PATH: process.env.PATH,
          KUBECREW_OPENAI_COMPATIBLE_API_KEY: SECRET,
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint,
          OTEL_SDK_DISABLED: "true",
          TRACEPARENT: `00-${traceId}-${PARENT}-01`,
        },
        policy: localPolicy,
      },
    );
    expect(outcome.error).toBeUndefined();
    // A traced adapter sends its spans before it exits (the tests above wait for them the same way).
    await new Promise((r) => setTimeout(r, 500));
    expect(collector.spans().filter((s) => s.traceId === traceId)).toEqual([]);
  });
});
