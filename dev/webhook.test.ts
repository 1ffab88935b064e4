import http from "node:http";
import type { AddressInfo } from "node:net";
import { SpanStatusCode } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../core/logger.ts";
import { recordSpans, spanText, type SpanRecorder } from "../test/support/span-recorder.ts";
import { deliverWebhook } from "./webhook.ts";

// kubecrew dev's delivery: each attempt a span of the execution's trace, as the controller's; neither the spans nor
// the lines hold the receiver's token (its URL's query) or the payload.
const TRACE = "6af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN = "d7ad6b7169203331";
const URL_TOKEN = "dev-receiver-token-a7c3";
const PAYLOAD_TEXT = "a-private-task-output";

let recorder: SpanRecorder;
let server: http.Server | undefined;
beforeEach(() => {
  recorder = recordSpans();
});
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await recorder.stop();
});

async function receiver(statuses: number[]): Promise<string> {
  server = http.createServer((req, res) => req.resume().on("end", () => res.writeHead(statuses.shift() ?? 200).end()));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=${URL_TOKEN}`;
}

async function deliver(url: string, attempts: number) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const delivered = await deliverWebhook(
    url,
    { kickoff_id: "e1", output: PAYLOAD_TEXT },
    { log, fetch },
    "s3cret",
    {
      delivery: "e1/task:draft",
      event: "task",
      trace: { traceparent: `00-${TRACE}-${PARENT_SPAN}-01`, execution: "e1", hook: "task:draft" },
    },
    attempts,
  );
  return { delivered, lines };
}

describe("deliverWebhook", () => {
  it("sends each attempt in a span under the execution's, naming the hook and the attempt", async () => {
    const { delivered } = await deliver(await receiver([200]), 3);
    expect(delivered).toBe(true);
    const [span, ...more] = recorder.spans();
    expect(more).toEqual([]);
    expect(span).toMatchObject({
      name: "webhook task",
      attributes: { "kubecrew.execution": "e1", "kubecrew.webhook.hook": "task:draft", "kubecrew.webhook.attempt": 1 },
      status: { code: SpanStatusCode.UNSET },
    });
    expect(span!.spanContext().traceId).toBe(TRACE);
    expect(span!.parentSpanContext?.spanId).toBe(PARENT_SPAN);
  });

  it("marks each refused attempt an error, and names neither the receiver's token nor the payload", async () => {
    const { delivered, lines } = await deliver(await receiver([500, 503]), 2);
    expect(delivered).toBe(false);
    expect(recorder.spans().map((s) => [s.attributes["kubecrew.webhook.attempt"], s.status.code])).toEqual([
      [1, SpanStatusCode.ERROR],
      [2, SpanStatusCode.ERROR],
    ]);
    expect(lines.map((l) => [l.msg, l.url, l.status])).toEqual([
      ["Webhook answered an error", expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/hook$/), 500],
      ["Webhook answered an error", expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/hook$/), 503],
    ]);
    const text = spanText(recorder.spans()) + JSON.stringify(lines);
    expect(text).not.toContain(URL_TOKEN);
    expect(text).not.toContain(PAYLOAD_TEXT);
  });
});
