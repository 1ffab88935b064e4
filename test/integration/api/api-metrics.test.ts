import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { apiMetrics } from "../../../api/app.ts";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import type { ApiMetrics } from "../../../api/metrics.ts";
import { startMetricsServer } from "../../../api/metrics-server.ts";
import type { RunningServer } from "../../../api/server.ts";
import { silentLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";
import { crewYaml, waitFor } from "../../support/dev-server.ts";

/**
 * The crew API's Prometheus metrics, scraped from their own port after real requests to `kubecrew dev`'s API (the
 * same app and server `kubecrew api` runs): requests by route template — a poll the status route's cache answered
 * before routing and one the router answered alike, never an id in a label — kickoffs by crew, event streams open.
 */
const token = "kco_api-metrics-test-token-000000000";
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
let dev: RunningDev;
let metrics: ApiMetrics;
let metricsServer: RunningServer;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-api-metrics-"));
  writeFileSync(join(dir, "quick.yaml"), crewYaml("quick", "mock", { tasks: 1 }));
  writeFileSync(join(dir, "slow.yaml"), crewYaml("slow", "sleep-60000", { tasks: 1 }));
  const tokens = new MemoryTokenStore();
  tokens.add(token, { kind: "org", crews: "*", subject: "org" });
  metrics = apiMetrics();
  const config = devConfigSchema.parse({ PORT: "0", KUBECREW_CREWS_DIR: dir, KUBECREW_DEFAULT_CREW: "quick" });
  dev = await startDev(config, silentLogger(), { tokens, metrics });
  metricsServer = await startMetricsServer({ host: "127.0.0.1", port: 0, registry: metrics.registry });
});

afterAll(async () => {
  await metricsServer?.stop();
  await dev?.stop();
});

async function kickoff(crewPath: string, key?: string): Promise<string> {
  const res = await fetch(`${dev.url}${crewPath}/kickoff`, {
    method: "POST",
    headers: { ...headers, ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify({ inputs: { topic: "metrics" } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

/** The scrape, and one series' value in it (0 when absent). */
async function scrape(): Promise<{ text: string; value(series: string): number }> {
  const res = await fetch(`${metricsServer.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
  const text = await res.text();
  return {
    text,
    value: (series) => {
      const line = text.split("\n").find((l) => l.startsWith(`${series} `));
      return line ? Number(line.slice(series.length + 1)) : 0;
    },
  };
}

const requests = (route: string, method: string, status: number) =>
  `kubecrew_api_requests_total{route="${route}",method="${method}",status="${status}"}`;

it("counts a kickoff and status polls by route template, kickoffs by crew, and names no id", async () => {
  const id = await kickoff("/crews/quick", "metrics-key-1");
  expect(await kickoff("/crews/quick", "metrics-key-1")).toBe(id); // a replay: answered, no new execution
  await kickoff(""); // the default crew's root path
  let polls = 0;
  await waitFor(async () => {
    polls++;
    const res = await fetch(`${dev.url}/crews/quick/status/${id}`, { headers });
    return ((await res.json()) as { status: string }).status === "completed";
  });
  // A poll with a query is the router's to answer (not the cache's before routing): the same route, counted alike.
  expect((await fetch(`${dev.url}/crews/quick/status/${id}?detail=1`, { headers })).status).toBe(200);
  expect((await fetch(`${dev.url}/status/${id}`, { headers })).status).toBe(200);
  const unknown = "00000000-0000-4000-8000-000000000000";
  expect((await fetch(`${dev.url}/crews/quick/status/${unknown}`, { headers })).status).toBe(404);
  expect((await fetch(`${dev.url}/no/such/${id}`, { headers })).status).toBe(404);

  const { text, value } = await scrape();
  expect(value(requests("/crews/:crew/kickoff", "POST", 200))).toBe(2);
  expect(value(requests("/kickoff", "POST", 200))).toBe(1);
  expect(value(`kubecrew_api_kickoffs_total{crew="quick"}`)).toBe(2);
  // Every poll, whichever way it was answered, is the status route's: the polls, the one with a query, the root's.
  expect(value(requests("/crews/:crew/status/:id", "GET", 200))).toBe(polls + 2);
  expect(value(requests("/crews/:crew/status/:id", "GET", 404))).toBe(1);
  expect(value(requests("unmatched", "GET", 404))).toBe(1);
  expect(value(`kubecrew_api_request_duration_seconds_count{route="/crews/:crew/status/:id",method="GET"}`)).toBe(
    polls + 3,
  );
  expect(value(`kubecrew_api_request_duration_seconds_count{route="/crews/:crew/kickoff",method="POST"}`)).toBe(2);
  expect(text).toContain("kubecrew_api_process_cpu_seconds_total");
  // Ids and crew names in paths never become labels (one series per route, not per request).
  expect(text).not.toContain(id);
  expect(text).not.toContain(unknown);
  expect(text).not.toContain("/no/such");
});

it("counts the event streams open, and no longer once one is closed", async () => {
  const id = await kickoff("/crews/slow");
  const stream = new AbortController();
  const res = await fetch(`${dev.url}/crews/slow/status/${id}/events`, { headers, signal: stream.signal });
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  await reader.read(); // the stream's first event: it is open
  expect((await scrape()).value("kubecrew_api_event_streams")).toBe(1);
  stream.abort();
  await reader.cancel().catch(() => {});
  await waitFor(async () => (await scrape()).value("kubecrew_api_event_streams") === 0);
  const { value } = await scrape();
  expect(value(requests("/crews/:crew/status/:id/events", "GET", 200))).toBe(1);
  await fetch(`${dev.url}/crews/slow/stop/${id}`, { method: "POST", headers });
});

it("answers only GET /metrics on its port", async () => {
  expect((await fetch(`${metricsServer.url}/`)).status).toBe(404);
  expect((await fetch(`${metricsServer.url}/metrics`, { method: "POST" })).status).toBe(404);
});
