import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTracing, type Tracing } from "../../platform/telemetry/tracing.ts";
import { startCollector, type RunningCollector, type StoredSpan } from "../support/otel-collector.ts";
import { applyCrew, waitFor } from "./support/fixture.ts";
import { flowManifest } from "./support/flow-manifests.ts";
import { hostForPods, installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver.ts";

/**
 * Issue 35 on a real control plane, traced into the real OpenTelemetry Collector: a flow run is one trace. The API (in
 * this process) exports the kickoff's span and writes its traceparent on the FlowExecution; the controller (its own
 * process) records the run's span `flow <flow>` under it, and under that each webhook delivery attempt, every request
 * carrying its attempt span's W3C `traceparent`, and the execution its agent method started — whose Job start and its
 * pod's task span follow below it.
 */
const kubeconfig = inject("kubeconfig");
let collector: RunningCollector;
let receiver: WebhookReceiver;
let tracing: Tracing;
let system: OwnSystem;

const document = {
  schema: "crewai.flow/v1",
  name: "TracedFlow",
  state: { type: "json_schema", json_schema: { type: "object", properties: { topic: { type: "string" } } } },
  methods: {
    prepare: { start: true, do: { call: "expression", expr: "'notes on ' + state.topic" } },
    write: {
      listen: "prepare",
      do: {
        call: "agent",
        with: { role: "Writer", goal: "Write one line", backstory: "Brief.", input: "${outputs.prepare}" },
      },
    },
    finish: { listen: "write", do: { call: "expression", expr: "'done: ' + outputs.prepare" } },
  },
};

beforeAll(async () => {
  if (installed) return; // the chart's controller cannot reach this machine's loopback collector
  [collector, receiver] = await Promise.all([startCollector(), startWebhookReceiver(hostForPods())]);
  tracing = startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint }, serviceName: "kubecrew-api" });
  system = await startOwnSystem(kubeconfig, "flowtrace");
  await system.startController({
    identity: "flowtrace-a",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint },
  });
});

afterAll(async () => {
  await system?.stop();
  await tracing?.stop();
  receiver?.close();
  await collector?.stop();
});

describe.skipIf(installed)("a flow run's trace on a cluster", () => {
  it("kickoff → flow run → each webhook delivery (its request carrying its traceparent) and the child execution", async () => {
    await applyCrew(
      kubeconfig,
      system.namespace,
      flowManifest("traced", document, { provider: "mock", model: "mock" }),
    );
    await waitFor("the flow served", async () => {
      const res = await system.api.call("/flows");
      return res.body.flows?.length ? true : undefined;
    });
    const kickoff = await system.api.call("/flows/traced/kickoff", {
      body: {
        inputs: { topic: "tides" },
        taskWebhookUrl: `${receiver.url}/method`,
        crewWebhookUrl: `${receiver.url}/flow`,
      },
    });
    expect(kickoff.status, JSON.stringify(kickoff.body)).toBe(200);
    const id = kickoff.body.kickoff_id as string;
    const hooks = await waitFor(
      "the run's four deliveries",
      async () => (receiver.hooks.length === 4 ? receiver.hooks : undefined),
      60_000,
    );
    await tracing.stop(); // sends the API's buffer (this process traces nothing more)

    const root = await waitFor("the kickoff's span at the collector", async () =>
      collector.spans().find((s) => s.name === "kickoff traced" && s.attributes["kubecrew.execution"] === id),
    );
    expect(root).toMatchObject({ service: "kubecrew-api", attributes: { "kubecrew.flow": "traced" } });
    const spans = await waitFor(
      "the run's spans at the collector",
      async () => {
        const all = collector.spans().filter((s) => s.traceId === root.traceId);
        const names = all.map((s) => s.name);
        const complete = names.includes("flow traced") && names.includes("task write");
        return complete && names.filter((n) => n.startsWith("webhook ")).length === 4 ? all : undefined;
      },
      60_000,
    );
    const children = (parent: StoredSpan) => spans.filter((s) => s.parentId === parent.spanId);
    const runs = children(root);
    expect(
      runs.map((s) => [s.name, s.service, s.attributes["kubecrew.phase"], s.attributes["kubecrew.execution"]]),
    ).toEqual([["flow traced", "kubecrew-controller", "Succeeded", id]]);
    const deliveries = children(runs[0]!).filter((s) => s.name.startsWith("webhook "));
    expect(deliveries.map((s) => [s.name, s.service, s.attributes["kubecrew.webhook.hook"]]).sort()).toEqual([
      ["webhook flow", "kubecrew-controller", "flow"],
      ["webhook method", "kubecrew-controller", "method:finish#1"],
      ["webhook method", "kubecrew-controller", "method:prepare#1"],
      ["webhook method", "kubecrew-controller", "method:write#1"],
    ]);
    // The agent method's execution under the run's span: its Job start, and its pod's task below that.
    const executions = children(runs[0]!).filter((s) => s.name.startsWith("execution "));
    expect(executions.map((s) => [s.name, s.service, s.attributes["kubecrew.phase"]])).toEqual([
      ["execution traced-write", "kubecrew-controller", "Succeeded"],
    ]);
    const [start] = children(executions[0]!);
    expect(start).toMatchObject({ name: "start_task write", service: "kubecrew-controller" });
    expect(children(start!)).toEqual([expect.objectContaining({ name: "task write", service: "kubecrew-runner" })]);
    // Each request names its delivery's span, in the kickoff's trace.
    const sent = hooks.map((h) => String(h.headers.traceparent ?? "").split("-"));
    expect(sent.map(([, trace]) => trace)).toEqual(hooks.map(() => root.traceId));
    expect(sent.map(([, , span]) => span).sort()).toEqual(deliveries.map((s) => s.spanId).sort());
  });
});
