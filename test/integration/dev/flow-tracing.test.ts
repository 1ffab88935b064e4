import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../../../core/logger.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../../e2e/support/webhook-receiver.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { startCollector, type RunningCollector, type StoredSpan } from "../../support/otel-collector.ts";

// A flow run in `kubecrew dev` with tracing on, exporting to the real OpenTelemetry Collector, is one trace: the
// kickoff request's span `kickoff <flow>` at its root, the run's span `flow <flow>` under it, and under that each
// webhook delivery attempt (`webhook method`, `webhook flow`), whose request carries that attempt span's W3C
// `traceparent`, and the execution its agent method started, with that execution's task under it. No span holds the
// receiver's URL query.
const WEBHOOK_TOKEN = "flow-receiver-token-7c41";
const FLOW = `schema: crewai.flow/v1
name: TracedFlow
state:
  type: json_schema
  json_schema:
    type: object
    properties: { topic: { type: string } }
    required: [topic]
methods:
  prepare:
    start: true
    do: { call: expression, expr: "'notes on ' + state.topic" }
  write:
    listen: prepare
    do:
      call: agent
      with: { role: Writer, goal: Write one line, backstory: Brief., input: "\${outputs.prepare}" }
`;

let collector: RunningCollector;
let receiver: WebhookReceiver;
let dev: RunningDev | undefined;

beforeAll(async () => {
  [collector, receiver] = await Promise.all([startCollector(), startWebhookReceiver()]);
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  receiver?.close();
  await collector?.stop();
});

const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };

it("exports one trace per flow run: kickoff → run → webhook deliveries (their traceparent sent), child execution", async () => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  dev = await startTestDev(
    { "traced-flow.yaml": FLOW },
    { log, runnerEnv: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint } },
  );
  const res = await fetch(`${dev.url}/flows/traced-flow/kickoff`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      inputs: { topic: "tides" },
      taskWebhookUrl: `${receiver.url}/method?token=${WEBHOOK_TOKEN}`,
      crewWebhookUrl: `${receiver.url}/flow?token=${WEBHOOK_TOKEN}`,
    }),
  });
  expect(res.status).toBe(200);
  const { kickoff_id } = (await res.json()) as { kickoff_id: string };
  // Both methods' webhooks and the run's: delivered before kubecrew dev stops, so their spans are sent with the rest.
  const hooks = await waitFor(async () => (receiver.hooks.length === 3 ? receiver.hooks : undefined), 60_000);
  await dev.stop(); // sends what the API and the run's deliveries still buffer
  dev = undefined;

  const kickoff = await waitFor(
    async () =>
      collector
        .spans()
        .find((s) => s.name === "kickoff traced-flow" && s.attributes["kubecrew.execution"] === kickoff_id),
    30_000,
  );
  expect(kickoff).toMatchObject({ service: "kubecrew", attributes: { "kubecrew.flow": "traced-flow" } });
  expect(kickoff.parentId).toBeUndefined();
  const inTrace = (s: StoredSpan) => s.traceId === kickoff.traceId;
  const spans = await waitFor(async () => {
    const all = collector.spans().filter(inTrace);
    const names = all.map((s) => s.name);
    const complete = names.includes("flow traced-flow") && names.includes("task write");
    return complete && names.filter((n) => n.startsWith("webhook ")).length === 3 ? all : undefined;
  }, 30_000).catch((error: unknown) => {
    const names = collector.spans().map((s) => `${s.name} (${inTrace(s) ? "in" : "not in"} the trace)`);
    throw new Error(`spans received: ${names.join(", ")}`, { cause: error });
  });

  const run = spans.find((s) => s.name === "flow traced-flow")!;
  expect(run).toMatchObject({
    parentId: kickoff.spanId,
    attributes: { "kubecrew.flow": "traced-flow", "kubecrew.execution": kickoff_id, "kubecrew.phase": "Succeeded" },
  });
  // Each delivery attempt is a span under the run's; the request names that span as its parent.
  const deliveries = spans.filter((s) => s.name.startsWith("webhook "));
  expect(
    deliveries.map((s) => [s.name, s.attributes["kubecrew.webhook.hook"], s.attributes["kubecrew.execution"]]).sort(),
  ).toEqual([
    ["webhook flow", "flow", kickoff_id],
    ["webhook method", "method:prepare#1", kickoff_id],
    ["webhook method", "method:write#1", kickoff_id],
  ]);
  for (const span of deliveries) expect(span.parentId).toBe(run.spanId);
  const sentParents = hooks.map((h) => String(h.headers.traceparent ?? ""));
  for (const traceparent of sentParents) expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  expect(sentParents.map((t) => t.split("-")[1])).toEqual([kickoff.traceId, kickoff.traceId, kickoff.traceId]);
  expect(sentParents.map((t) => t.split("-")[2]).sort()).toEqual(deliveries.map((s) => s.spanId).sort());

  // The agent method's child execution joins the run's trace, its task under it.
  const execution = spans.find((s) => s.name.startsWith("execution "))!;
  expect(execution).toMatchObject({ name: "execution traced-flow-write", parentId: run.spanId });
  expect(spans.find((s) => s.name === "task write")).toMatchObject({
    parentId: execution.spanId,
    service: "kubecrew-runner",
  });
  expect(JSON.stringify(spans)).not.toContain(WEBHOOK_TOKEN);
  // Every line of kubecrew dev's that names the run names its trace.
  const named = lines.filter((line) => JSON.stringify(line).includes(kickoff_id));
  expect(named.map((line) => line.msg)).toEqual(expect.arrayContaining(["Flow kicked off", "Flow finished"]));
  for (const line of named) expect(line).toMatchObject({ trace_id: kickoff.traceId });
}, 120_000);
