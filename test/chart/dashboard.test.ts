/**
 * The Grafana dashboard shipped with the chart (charts/kubecrew/dashboards/kubecrew.json): it loads as JSON, every
 * panel has a query, and every metric a query names is one the controller or the API exports (their registries' own
 * names, a histogram's _bucket/_sum/_count series included) — a renamed metric fails here, not on an operator's screen.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Registry } from "prom-client";
import { apiMetrics } from "../../api/app.ts";
import { ControllerMetrics } from "../../controller/metrics.ts";

const file = join(import.meta.dirname, "../../charts/kubecrew/dashboards/kubecrew.json");

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
}

/** The series names of the controller's and the API's registries. */
async function exportedSeries(): Promise<Set<string>> {
  const controller = new ControllerMetrics({
    phases: () => [],
    queueDepth: () => 0,
    inFlight: () => 0,
    starts: () => ({ starting: 0, waiting: 0 }),
    isLeader: () => false,
  });
  const names = new Set<string>();
  const registries: Registry[] = [controller.registry, apiMetrics().registry];
  for (const registry of registries) {
    for (const m of await registry.getMetricsAsJSON()) {
      names.add(m.name);
      if (m.type.toString() === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(m.name + s);
    }
  }
  return names;
}

it("queries only metrics the controller or the API exports, one query or more per panel", async () => {
  const dashboard = JSON.parse(readFileSync(file, "utf8")) as Dashboard;
  const exported = await exportedSeries();
  expect(dashboard.panels.length).toBeGreaterThan(0);
  const named = new Set<string>();
  for (const panel of dashboard.panels) {
    expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    for (const { expr } of panel.targets!) {
      const metrics = expr.match(/\bkubecrew_[a-z0-9_]+/g) ?? [];
      expect(metrics.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
      for (const metric of metrics) {
        expect(exported, `${panel.title}: ${metric}`).toContain(metric);
        named.add(metric);
      }
    }
  }
  // The usage counters this dashboard is for.
  expect(named).toContain("kubecrew_llm_tokens_total");
  expect(named).toContain("kubecrew_llm_cost_usd_total");
  // The API's: its requests, their duration, kickoffs, event streams.
  expect(named).toContain("kubecrew_api_requests_total");
  expect(named).toContain("kubecrew_api_request_duration_seconds_bucket");
  expect(named).toContain("kubecrew_api_kickoffs_total");
  expect(named).toContain("kubecrew_api_event_streams");
});
