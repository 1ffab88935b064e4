import http from "node:http";
import type { AddressInfo } from "node:net";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { recordSpans, spanText, type SpanRecorder } from "../test/support/span-recorder.ts";
import { WebhookDispatcher, type WebhookDelivery } from "./webhooks.ts";

// A webhook delivery attempt is a span of the execution's trace (`webhook <kind>`, under the traceparent the
// delivery carries), an error when the receiver did not take it; its log lines name the trace. Neither the span nor
// the lines hold the URL's query (a receiver's token) or the payload.
const TRACE = "5af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN = "c7ad6b7169203331";
const URL_TOKEN = "receiver-token-0d41";
const PAYLOAD_TEXT = "the-output-of-a-private-task";

let recorder: SpanRecorder;
const cleanup: (() => Promise<void>)[] = [];
beforeEach(() => {
  recorder = recordSpans();
});
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
  await recorder.stop();
});

/** A receiver answering each request with the next status (200 once they run out). */
async function receiver(statuses: number[]): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume().on("end", () => res.writeHead(statuses.shift() ?? 200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=${URL_TOKEN}`;
}

async function deliver(url: string, maxAttempts: number) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const dispatcher = new WebhookDispatcher({
    log,
    secretFor: async () => "s3cret",
    onFinished: () => undefined,
    initialDelayMs: 5,
    maxAttempts,
  });
  cleanup.push(async () => dispatcher.stop());
  const delivery: WebhookDelivery = {
    hook: "task:research",
    kind: "task",
    namespace: "team",
    execution: "e1",
    executionUid: "uid-of-e1",
    crew: "research",
    url,
    payload: { kickoff_id: "e1", output: PAYLOAD_TEXT },
    traceparent: `00-${TRACE}-${PARENT_SPAN}-01`,
  };
  dispatcher.enqueue(delivery);
  await dispatcher.idle();
  return lines;
}

describe("a webhook delivery's span", () => {
  it("is a client span under the delivery's traceparent, naming the hook and the attempt", async () => {
    const lines = await deliver(await receiver([200]), 3);
    const spans = recorder.spans();
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({
      name: "webhook task",
      kind: SpanKind.CLIENT,
      attributes: {
        "kubecrew.execution": "e1",
        "kubecrew.webhook.hook": "task:research",
        "kubecrew.webhook.attempt": 1,
      },
      status: { code: SpanStatusCode.UNSET },
    });
    expect(spans[0]!.spanContext().traceId).toBe(TRACE);
    expect(spans[0]!.parentSpanContext?.spanId).toBe(PARENT_SPAN);
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([["Webhook delivered", TRACE]]);
    const text = spanText(spans) + JSON.stringify(lines);
    expect(text).not.toContain(URL_TOKEN);
    expect(text).not.toContain(PAYLOAD_TEXT);
  });

  it("of an attempt the receiver refused is an error, one span per attempt", async () => {
    const lines = await deliver(await receiver([503, 500]), 2);
    const spans = recorder.spans();
    expect(spans.map((s) => [s.name, s.attributes["kubecrew.webhook.attempt"], s.status])).toEqual([
      ["webhook task", 1, { code: SpanStatusCode.ERROR, message: "not delivered" }],
      ["webhook task", 2, { code: SpanStatusCode.ERROR, message: "not delivered" }],
    ]);
    for (const span of spans) expect(span.parentSpanContext?.spanId).toBe(PARENT_SPAN);
    expect(lines.map((l) => [l.msg, l.trace_id])).toEqual([
      ["Webhook delivery failed; retrying", TRACE],
      ["Webhook delivery abandoned", TRACE],
    ]);
    const text = spanText(spans) + JSON.stringify(lines);
    expect(text).not.toContain(URL_TOKEN);
    expect(text).not.toContain(PAYLOAD_TEXT);
  });
});
