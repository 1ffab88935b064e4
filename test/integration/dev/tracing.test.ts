import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../e2e/support/webhook-receiver.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { startCollector, type RunningCollector, type StoredSpan } from "../../support/otel-collector.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture } from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// One execution of a three-task crew with an MCP tool in `kubecrew dev`, exporting to the real OpenTelemetry Collector
// (its OTLP receiver; its file exporter writes what it received, which the test reads): one trace whose
// spans form kickoff → execution → task → LLM call / tool call, the LLM calls' GenAI token counts those the fixture
// answered with, and no span holding the API key, the MCP server's bearer token or the prompt. The webhook deliveries
// (each task's, the crew's) are spans under the execution's; every log line naming the execution names its trace.
const API_KEY = "sk-dev-trace-secret-91f3";
const MCP_BEARER = "mcp-dev-trace-bearer-5e2d";
const WEBHOOK_TOKEN = "receiver-query-token-62b0";
let collector: RunningCollector;
let llm: LlmFixture;
let mcp: FixtureMcpServer;
let receiver: WebhookReceiver;
let dev: RunningDev | undefined;

beforeAll(async () => {
  [collector, llm, mcp, receiver] = await Promise.all([
    startCollector(),
    startLlmFixture(),
    startFixtureMcpServer(),
    startWebhookReceiver(),
  ]);
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  receiver?.close();
  await Promise.all([collector?.stop(), llm?.stop(), mcp?.stop()]);
});

const crew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: traced }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  mcpServers:
    - { name: facts, url: "${mcp.url}", headers: [{ name: Authorization, value: "Bearer ${MCP_BEARER}" }] }
  agents:
    - { name: scout, role: Scout, goal: "Find facts about {topic}", mcps: [facts], maxIter: 5 }
  tasks:
    - { name: look, agent: scout, description: "Look up the secret-free topic {topic}", expectedOutput: "Facts" }
    - { name: sort, agent: scout, description: "Sort the facts on {topic}", expectedOutput: "Sorted" }
    - { name: tell, agent: scout, description: "Tell the story of {topic}", expectedOutput: "A story" }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

const children = (spans: StoredSpan[], parent: StoredSpan) => spans.filter((s) => s.parentId === parent.spanId);

it("exports one trace: kickoff → execution → task → LLM call / tool call", async () => {
  llm.enqueue(
    toolCalls({ name: "lookup", input: { key: "tides" } }),
    answer("Tides follow the moon.", { inputTokens: 40, outputTokens: 6 }),
    answer("Sorted.", { inputTokens: 21, outputTokens: 2 }),
    answer("A story.", { inputTokens: 17, outputTokens: 3 }),
  );
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  dev = await startTestDev(
    { "traced.yaml": crew() },
    {
      log,
      runnerEnv: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint,
        KUBECREW_OPENAI_COMPATIBLE_API_KEY: API_KEY,
        KUBECREW_OUTBOUND_ALLOW_LOOPBACK: "true",
      },
    },
  );
  const res = await fetch(`${dev.url}/crews/traced/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({
      inputs: { topic: "tides" },
      taskWebhookUrl: `${receiver.url}/task?token=${WEBHOOK_TOKEN}`,
      crewWebhookUrl: `${receiver.url}/crew?token=${WEBHOOK_TOKEN}`,
    }),
  });
  expect(res.status).toBe(200);
  const { kickoff_id } = (await res.json()) as { kickoff_id: string };
  const final = await waitFor(async () => {
    const s = (await (
      await fetch(`${dev!.url}/crews/traced/status/${kickoff_id}`, {
        headers: { authorization: `Bearer ${tokens.org}` },
      })
    ).json()) as {
      status: string;
      error?: string;
      trace_id?: string;
      usage?: { input_tokens: number; output_tokens: number };
    };
    return s.status === "running" ? undefined : s;
  }, 60_000);
  expect(final).toMatchObject({ status: "completed" });
  // Each task's webhook and the crew's: delivered before kubecrew dev stops, so their spans are sent with the rest.
  await waitFor(async () => (receiver.hooks.length === 4 ? true : undefined), 30_000);
  await dev.stop(); // sends what the API and the execution still buffer
  dev = undefined;

  // /status names the trace; every span of the execution is in it.
  expect(final.trace_id).toMatch(/^[0-9a-f]{32}$/);
  const spans = await waitFor(async () => {
    const all = collector.spans().filter((s) => s.traceId === final.trace_id);
    const names = all.map((s) => s.name);
    return names.filter((n) => n.startsWith("chat ")).length === 4 &&
      names.filter((n) => n.startsWith("webhook ")).length === 4 &&
      names.includes("kickoff traced") &&
      names.includes("execution traced")
      ? all
      : undefined;
  }, 30_000).catch((error: unknown) => {
    throw new Error(
      `spans received: ${collector
        .spans()
        .map((x) => x.name)
        .join(", ")}`,
      { cause: error },
    );
  });
  expect(collector.spans().filter((s) => s.name.startsWith("chat ") || s.name.startsWith("task "))).toEqual(
    spans.filter((s) => s.name.startsWith("chat ") || s.name.startsWith("task ")),
  );
  const kickoff = spans.find((s) => s.name === "kickoff traced")!;
  expect(kickoff.parentId).toBeUndefined();
  const [execution] = children(spans, kickoff);
  expect(execution).toMatchObject({ name: "execution traced", service: "kubecrew" });
  const tasks = children(spans, execution!).filter((s) => s.name.startsWith("task "));
  expect(tasks.map((t) => t.name).sort()).toEqual(["task look", "task sort", "task tell"]);
  // The deliveries: one span per attempt (each delivered at once here), under the execution's span.
  const hooks = children(spans, execution!).filter((s) => s.name.startsWith("webhook "));
  expect(
    hooks.map((s) => [s.name, s.attributes["kubecrew.webhook.hook"], s.attributes["kubecrew.webhook.attempt"]]).sort(),
  ).toEqual([
    ["webhook crew", "crew", 1],
    ["webhook task", "task:look", 1],
    ["webhook task", "task:sort", 1],
    ["webhook task", "task:tell", 1],
  ]);
  for (const hook of hooks)
    expect(hook).toMatchObject({ service: "kubecrew", attributes: { "kubecrew.execution": kickoff_id } });
  // Each request names its attempt's span as its parent (W3C traceparent), for a receiver that traces.
  const sent = receiver.hooks.map((h) => String(h.headers.traceparent ?? "").split("-"));
  expect(sent.map(([, trace]) => trace)).toEqual(hooks.map(() => final.trace_id));
  expect(sent.map(([, , span]) => span).sort()).toEqual(hooks.map((s) => s.spanId).sort());
  // Every line of kubecrew dev's that names the execution names its trace.
  const named = lines.filter((line) => JSON.stringify(line).includes(kickoff_id));
  expect(named.filter((line) => line.msg === "Task started")).toHaveLength(3);
  for (const line of named) expect(line).toMatchObject({ trace_id: final.trace_id });
  for (const task of tasks) expect(task.service).toBe("kubecrew-runner");
  const look = tasks.find((t) => t.name === "task look")!;
  const lookChildren = children(spans, look);
  expect(lookChildren.map((s) => s.name).sort()).toEqual([
    "chat fixture-model",
    "chat fixture-model",
    "execute_tool lookup",
  ]);
  expect(lookChildren.find((s) => s.name === "execute_tool lookup")!.attributes).toMatchObject({
    "kubecrew.mcp.server": "facts",
  });
  const tokensOf = (task: StoredSpan) =>
    children(spans, task)
      .filter((s) => s.name.startsWith("chat "))
      .map((s) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]);
  expect(tokensOf(look)).toContainEqual([40, 6]);
  expect(tokensOf(tasks.find((t) => t.name === "task sort")!)).toEqual([[21, 2]]);
  expect(tokensOf(tasks.find((t) => t.name === "task tell")!)).toEqual([[17, 3]]);
  // The LLM spans' GenAI token counts add up to the usage /status reports.
  const chats = spans.filter((s) => s.name.startsWith("chat "));
  const sum = (key: string) => chats.reduce((n, s) => n + Number(s.attributes[key]), 0);
  expect({ input_tokens: sum("gen_ai.usage.input_tokens"), output_tokens: sum("gen_ai.usage.output_tokens") }).toEqual({
    input_tokens: final.usage?.input_tokens,
    output_tokens: final.usage?.output_tokens,
  });
  const everything = JSON.stringify(spans);
  expect(everything).not.toContain(API_KEY);
  expect(everything).not.toContain(MCP_BEARER);
  expect(everything).not.toContain("Bearer ");
  expect(everything).not.toContain("secret-free topic"); // the prompt
  expect(everything).not.toContain(WEBHOOK_TOKEN); // the receivers' URLs' query
}, 120_000);
