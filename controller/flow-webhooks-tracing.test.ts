import http from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { decodeFlow, decodeFlowExecution, type CachedFlow, type CachedFlowExecution } from "../kube/flow-objects.ts";
import { methodResultName } from "../kube/flow-names.ts";
import {
  ANNOTATION_TRACEPARENT,
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  FLOW_EXECUTIONS,
  FLOWS,
  resourcePath,
  SECRETS,
} from "../kube/resources.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { startTracing, type Tracing } from "../platform/telemetry/tracing.ts";
import { byExecution, executionForCache, resultForCache } from "./caches.ts";
import { flowRunSpanId, recordFlowRunSpan } from "./flow-run-trace.ts";
import { FlowWebhooks } from "./flow-webhooks.ts";
import { WebhookDispatcher } from "./webhooks.ts";

// A flow run's webhook deliveries on a cluster are spans of the run's trace: under the run's span `flow <flow>`, itself
// under the flow kickoff's span whose traceparent the API left on the FlowExecution; each request carries its attempt
// span's `traceparent`, so a receiver that traces continues the same trace. With tracing off the request carries no
// `traceparent`.
const NS = "team-a";
const RUN = "0b7c3f0e-9a51-4c36-8f0b-5a0d2f6c1e77";
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const KICKOFF_SPAN = "00f067aa0ba902b7";
const SECRET_KEY = "signing-key";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

interface Received {
  path: string;
  traceparent: string | undefined;
}

/** A receiver that answers each POST 204 and keeps its path and `traceparent` header. */
async function receiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    req.resume().on("end", () => {
      const traceparent = req.headers.traceparent;
      received.push({ path: req.url ?? "", traceparent: typeof traceparent === "string" ? traceparent : undefined });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A finished run of a one-method flow, with its method's result, as the controller's caches hold it. */
async function finishedRun(url: string, annotations: Record<string, string>) {
  const kube = new RecordingKube();
  const log = silentLogger();
  kube.seed(resourcePath(FLOWS, NS), {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "Flow",
    metadata: { name: "chain", namespace: NS, uid: "flow-uid" },
    spec: { schema: "crewai.flow/v1", name: "Chain", methods: { first: { start: true, do: { call: "expression" } } } },
  });
  kube.seed(resourcePath(SECRETS, NS), {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "chain-flow-webhook", namespace: NS },
    data: { [SECRET_KEY]: Buffer.from("flow-secret").toString("base64") },
  } as KubeObject);
  kube.seed(resourcePath(FLOW_EXECUTIONS, NS), {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "FlowExecution",
    metadata: { name: RUN, namespace: NS, uid: "run-uid", annotations },
    spec: {
      flowRef: { name: "chain" },
      inputs: {},
      webhooks: { task: `${url}/method`, crew: `${url}/flow` },
    },
    status: {
      phase: "Succeeded",
      executionTime: 1,
      methods: [
        {
          id: "first#1",
          method: "first",
          phase: "Succeeded",
          startTime: "2026-11-27T03:00:00.000Z",
          completionTime: "2026-11-27T03:00:01.000Z",
        },
      ],
    },
  } as KubeObject);
  kube.seed(resourcePath(CREW_TASK_RESULTS, NS), {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "CrewTaskResult",
    metadata: { name: methodResultName(RUN, "first#1"), namespace: NS, labels: { "kubecrew.io/execution": RUN } },
    spec: {
      executionRef: { name: RUN },
      taskName: "first",
      taskIndex: 1,
      agent: "",
      output: "one",
      jsonDict: { output: "one" },
      executionTime: 1,
    },
  });
  const informer = <T extends KubeObject>(
    type: typeof FLOWS,
    transform: (o: KubeObject) => T,
    indexKeys?: (o: T) => string[],
  ) =>
    new Informer<T>({
      client: kube,
      log,
      path: resourcePath(type, NS),
      transform,
      ...(indexKeys ? { indexKeys } : {}),
    });
  const flows = informer<CachedFlow | Undecodable>(FLOWS, decodeFlow);
  const runs = informer<CachedFlowExecution | Undecodable>(FLOW_EXECUTIONS, decodeFlowExecution);
  const results = informer<CachedTaskResult | Undecodable>(CREW_TASK_RESULTS, (r) => resultForCache(r), byExecution);
  const executions = informer<CachedExecution | Undecodable>(
    CREW_EXECUTIONS,
    executionForCache(new CrewSpecSnapshots()),
  );
  for (const [cache, type] of [
    [flows, FLOWS],
    [runs, FLOW_EXECUTIONS],
    [results, CREW_TASK_RESULTS],
  ] as const) {
    for (const o of (await kube.list<KubeObject>(resourcePath(type, NS))).items) cache.upsert(o);
  }
  const run = runs.get(NS, RUN);
  if (!run || isUndecodable(run)) throw new Error("the run does not decode");
  let hooks: FlowWebhooks | undefined = undefined;
  const dispatcher = new WebhookDispatcher({
    log,
    secretFor: async () => "unused",
    flowSecretFor: (namespace, flow) => hooks!.secretFor(namespace, flow),
    onFinished: (delivery, result) => hooks!.recordDelivery(delivery, result),
    initialDelayMs: 5,
    maxAttempts: 2,
  });
  cleanup.push(() => dispatcher.stop());
  hooks = new FlowWebhooks({ client: kube, flows, runs, results, executions, dispatcher, secretKey: SECRET_KEY, log });
  return { run, hooks, dispatcher };
}

async function deliverAll(annotations: Record<string, string>) {
  const { url, received } = await receiver();
  const { run, hooks, dispatcher } = await finishedRun(url, annotations);
  hooks.enqueueDue(run);
  await dispatcher.idle();
  return received.sort((a, b) => a.path.localeCompare(b.path));
}

describe("a flow run's trace, tracing on", () => {
  let memory: InMemorySpanExporter;
  let tracing: Tracing | undefined;
  beforeEach(() => {
    memory = new InMemorySpanExporter();
    // The exporter's own shutdown forgets what it holds: keep it for the test to read.
    const exporter = { export: memory.export.bind(memory), shutdown: async () => {} };
    tracing = startTracing({ env: {}, serviceName: "kubecrew-controller", exporter });
  });
  afterEach(async () => {
    await tracing?.stop();
  });
  /** The spans exported so far (the batch sent: tracing stopped). */
  const exported = async (): Promise<ReadableSpan[]> => {
    await tracing?.stop();
    tracing = undefined;
    return memory.getFinishedSpans();
  };
  const RUN_SPAN = flowRunSpanId({ metadata: { uid: "run-uid" } });

  it("has each delivery attempt as a client span under the run's span, its request carrying its traceparent", async () => {
    const received = await deliverAll({ [ANNOTATION_TRACEPARENT]: `00-${TRACE}-${KICKOFF_SPAN}-01` });
    const spans = await exported();
    expect(
      spans.map((s) => [s.name, s.kind, s.attributes["kubecrew.webhook.hook"], s.attributes["kubecrew.execution"]]),
    ).toEqual(
      expect.arrayContaining([
        ["webhook method", SpanKind.CLIENT, "method:first#1", RUN],
        ["webhook flow", SpanKind.CLIENT, "flow", RUN],
      ]),
    );
    expect(spans).toHaveLength(2);
    for (const span of spans) {
      expect(span.spanContext().traceId).toBe(TRACE);
      expect(span.parentSpanContext?.spanId).toBe(RUN_SPAN);
    }
    const spanOf = (hook: string) => spans.find((s) => s.attributes["kubecrew.webhook.hook"] === hook)!;
    expect(received).toEqual([
      { path: "/flow", traceparent: `00-${TRACE}-${spanOf("flow").spanContext().spanId}-01` },
      { path: "/method", traceparent: `00-${TRACE}-${spanOf("method:first#1").spanContext().spanId}-01` },
    ]);
  });

  it("has the run's span, with the id its children named, under the kickoff's, an error when the run failed", async () => {
    const run = {
      metadata: {
        name: RUN,
        namespace: NS,
        uid: "run-uid",
        creationTimestamp: "2026-11-27T03:00:00Z",
        annotations: { [ANNOTATION_TRACEPARENT]: `00-${TRACE}-${KICKOFF_SPAN}-01` },
      },
    };
    recordFlowRunSpan(run, "chain", {
      phase: "Failed",
      error: "methods.first: boom",
      completionTime: "2026-11-27T03:00:05Z",
    });
    recordFlowRunSpan({ metadata: { ...run.metadata, annotations: {} } }, "chain", { phase: "Succeeded" });
    const spans = await exported();
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({
      name: "flow chain",
      attributes: {
        "kubecrew.flow": "chain",
        "kubecrew.execution": RUN,
        "kubecrew.phase": "Failed",
        "k8s.namespace.name": NS,
      },
      status: { code: SpanStatusCode.ERROR, message: "methods.first: boom" },
    });
    expect(spans[0]!.spanContext()).toMatchObject({ traceId: TRACE, spanId: RUN_SPAN });
    expect(spans[0]!.parentSpanContext?.spanId).toBe(KICKOFF_SPAN);
    expect(spans[0]!.duration).toEqual([5, 0]);
  });
});

describe("a flow run's webhook deliveries, tracing off", () => {
  it("carry no traceparent, even from a run the API traced", async () => {
    const received = await deliverAll({ [ANNOTATION_TRACEPARENT]: `00-${TRACE}-${KICKOFF_SPAN}-01` });
    expect(received).toEqual([
      { path: "/flow", traceparent: undefined },
      { path: "/method", traceparent: undefined },
    ]);
  });
});
