import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { signWebhook } from "../core/webhook-signature.ts";
import { MissingSigningSecretError } from "./webhook-secrets.ts";
import { WebhookDispatcher, type DeliveryResult, type WebhookDelivery } from "./webhooks.ts";

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function receiver(statuses: number[]): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const delivery = (url: string): WebhookDelivery => ({
  hook: "task:research",
  kind: "task",
  namespace: "team",
  execution: "e1",
  executionUid: "6c0f3a52-uid-of-e1",
  crew: "research",
  url,
  payload: { kickoff_id: "e1", output: "done" },
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

function dispatcher(
  secret: string | (() => string),
  finished: [string, DeliveryResult][],
  owns?: (d: WebhookDelivery) => boolean,
) {
  const d = new WebhookDispatcher({
    ...(owns ? { owns } : {}),
    log: silentLogger(),
    secretFor: async () => (typeof secret === "string" ? secret : secret()),
    onFinished: (del, result) => {
      finished.push([del.hook, result]);
    },
    initialDelayMs: 10,
    maxAttempts: 3,
  });
  cleanup.push(async () => d.stop());
  return d;
}

describe("WebhookDispatcher", () => {
  it("POSTs the payload signed with HMAC-SHA256 over timestamp.body", async () => {
    const r = await receiver([200]);
    cleanup.push(r.close);
    const finished: [string, DeliveryResult][] = [];
    const d = dispatcher("s3cret", finished);
    d.enqueue(delivery(r.url));
    await d.idle();
    expect(finished).toEqual([["task:research", "delivered"]]);
    const { headers, body } = r.received[0]!;
    expect(JSON.parse(body)).toEqual({ kickoff_id: "e1", output: "done" });
    const timestamp = headers["x-kubecrew-timestamp"] as string;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(5);
    expect(headers["x-kubecrew-signature"]).toBe(signWebhook("s3cret", timestamp, body));
    expect(headers["x-kubecrew-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(headers["x-kubecrew-event"]).toBe("task");
  });

  it("sends a human-input webhook with the kickoff's credentials, read from their Secret; other webhooks without", async () => {
    const r = await receiver([200, 200]);
    cleanup.push(r.close);
    const reads: string[] = [];
    const d = new WebhookDispatcher({
      log: silentLogger(),
      secretFor: async () => "s",
      authorizationFor: async (namespace, ref) => {
        reads.push(`${namespace}/${ref.name}/${ref.key}`);
        return "Bearer receiver-token";
      },
      onFinished: () => undefined,
    });
    cleanup.push(async () => d.stop());
    const ref = { name: "e1-human-input", key: "authorization" };
    d.enqueue({ ...delivery(r.url), hook: "human-input:research", kind: "human_input", authorization: ref });
    d.enqueue(delivery(r.url));
    await d.idle();
    const byEvent = Object.fromEntries(r.received.map((x) => [x.headers["x-kubecrew-event"], x.headers.authorization]));
    expect(byEvent).toEqual({ human_input: "Bearer receiver-token", task: undefined });
    expect(reads).toEqual(["team/e1-human-input/authorization"]);
  });

  it("signs a flow run's webhook with the flow's secret, not a crew's", async () => {
    const r = await receiver([200]);
    cleanup.push(r.close);
    const asked: string[] = [];
    const d = new WebhookDispatcher({
      log: silentLogger(),
      secretFor: async (_ns, crew) => {
        asked.push(`crew ${crew}`);
        return "crew-key";
      },
      flowSecretFor: async (namespace, flow) => {
        asked.push(`flow ${namespace}/${flow}`);
        return "flow-key";
      },
      onFinished: () => undefined,
    });
    cleanup.push(async () => d.stop());
    d.enqueue({ ...delivery(r.url), hook: "method:write#1", kind: "method", crew: "", flow: "review" });
    await d.idle();
    const { headers, body } = r.received[0]!;
    expect(asked).toEqual(["flow team/review"]);
    expect(headers["x-kubecrew-signature"]).toBe(
      signWebhook("flow-key", headers["x-kubecrew-timestamp"] as string, body),
    );
    expect(headers["x-kubecrew-event"]).toBe("method");
    expect(headers["x-kubecrew-delivery"]).toBe("6c0f3a52-uid-of-e1/method:write#1");
  });

  it("sends the same X-Kubecrew-Delivery (execution uid + hook) from every dispatcher, another run's differs", async () => {
    const r = await receiver([200, 200, 200]);
    cleanup.push(r.close);
    // Two dispatchers stand for a controller and the one that replaced it after a SIGKILL before the record.
    for (const d of [dispatcher("s", []), dispatcher("s", [])]) {
      d.enqueue({ ...delivery(r.url), hook: "step:research:1:0", kind: "step" });
      await d.idle();
    }
    const rerun = dispatcher("s", []);
    rerun.enqueue({ ...delivery(r.url), hook: "step:research:1:0", kind: "step", executionUid: "another-run-uid" });
    await rerun.idle();
    expect(r.received.map((x) => x.headers["x-kubecrew-delivery"])).toEqual([
      "6c0f3a52-uid-of-e1/step:research:1:0",
      "6c0f3a52-uid-of-e1/step:research:1:0",
      "another-run-uid/step:research:1:0",
    ]);
  });

  it("retries server errors with backoff until delivered, and sends one delivery once however often it is enqueued", async () => {
    const r = await receiver([500, 503, 200]);
    cleanup.push(r.close);
    const finished: [string, DeliveryResult][] = [];
    const d = dispatcher("s", finished);
    expect(d.enqueue(delivery(r.url))).toBe(true);
    expect(d.enqueue(delivery(r.url))).toBe(false);
    await d.idle();
    expect(r.received).toHaveLength(3);
    expect(finished).toEqual([["task:research", "delivered"]]);
  });

  it("never sends unsigned: while the crew's secret cannot be read it retries, and sends once the secret is there", async () => {
    const r = await receiver([200]);
    cleanup.push(r.close);
    const finished: [string, DeliveryResult][] = [];
    let reads = 0;
    const d = dispatcher(() => {
      if (++reads < 3) throw new MissingSigningSecretError("the crew's webhook signing Secret team/x is missing");
      return "generated-key";
    }, finished);
    d.enqueue(delivery(r.url));
    await d.idle();
    expect(r.received).toHaveLength(1);
    const { headers, body } = r.received[0]!;
    expect(headers["x-kubecrew-signature"]).toBe(
      signWebhook("generated-key", String(headers["x-kubecrew-timestamp"]), body),
    );
    expect(finished).toEqual([["task:research", "delivered"]]);
  });

  it("gives up, having sent nothing, on a crew whose secret never appears", async () => {
    const r = await receiver([200]);
    cleanup.push(r.close);
    const finished: [string, DeliveryResult][] = [];
    const d = dispatcher(() => {
      throw new MissingSigningSecretError("the crew's webhook signing Secret team/x is missing");
    }, finished);
    d.enqueue(delivery(r.url));
    await d.idle();
    expect(r.received).toHaveLength(0);
    expect(finished).toEqual([["task:research", "failed"]]);
  });

  it("sharded: stops retrying a delivery whose execution's shard this replica lost, and may take it up again", async () => {
    const r = await receiver([500, 500, 200]);
    cleanup.push(r.close);
    const finished: [string, DeliveryResult][] = [];
    let owned = true;
    const d = dispatcher("s", finished, () => owned);
    d.enqueue(delivery(r.url));
    await new Promise((resolve) => setTimeout(resolve, 5));
    owned = false;
    await d.idle();
    expect(r.received).toHaveLength(1);
    expect(finished).toEqual([]);
    owned = true;
    expect(d.enqueue(delivery(r.url))).toBe(true);
    await d.idle();
    expect(r.received).toHaveLength(3);
    expect(finished).toEqual([["task:research", "delivered"]]);
  });

  it("gives up on a client error and after the last attempt", async () => {
    const r = await receiver([400, 500, 500, 500]);
    cleanup.push(r.close);
    const finished: [string, DeliveryResult][] = [];
    const d = dispatcher("s", finished);
    d.enqueue(delivery(r.url));
    d.enqueue({ ...delivery(r.url), hook: "crew", kind: "crew" });
    await d.idle();
    expect(finished.sort()).toEqual([
      ["crew", "failed"],
      ["task:research", "failed"],
    ]);
    expect(r.received).toHaveLength(4);
  });

  it("abandons a URL the outbound policy refuses at once, without retrying and without connecting", async () => {
    const r = await receiver([200]);
    cleanup.push(r.close);
    // The cluster policy refuses loopback: the receiver listening there must see nothing.
    const outbound = createOutboundClient(clusterPolicy);
    cleanup.push(() => outbound.close());
    const finished: [string, DeliveryResult, string][] = [];
    const d = new WebhookDispatcher({
      log: silentLogger(),
      fetch: outbound.fetch,
      secretFor: async () => "s",
      onFinished: (del, result, detail) => void finished.push([del.hook, result, detail]),
      initialDelayMs: 10,
      maxAttempts: 3,
    });
    cleanup.push(async () => d.stop());
    d.enqueue(delivery(r.url));
    await d.idle();
    expect(finished).toEqual([
      ["task:research", "failed", "127.0.0.1 is a loopback address; calls to it are refused here"],
    ]);
    expect(d.failedAttempts).toBe(1);
    expect(r.received).toHaveLength(0);
  });
});
