/**
 * The Grafana dashboard shipped with the chart (charts/kubecrew/dashboards/kubecrew.json): it loads as JSON, every
 * panel has a query, and every metric a query names is one the controller exports (its registry's own names, a
 * histogram's _bucket/_sum/_count series included) — a renamed metric fails here, not on an operator's screen.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ControllerMetrics } from "../../controller/metrics.ts";

const file = join(import.meta.dirname, "../../charts/kubecrew/dashboards/kubecrew.json");

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
}

async function exportedSeries(): Promise<Set<string>> {
  const metrics = new ControllerMetrics({
    phases: () => [],
    queueDepth: () => 0,
    inFlight: () => 0,
    starts: () => ({ starting: 0, waiting: 0 }),
    isLeader: () => false,
  });
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (m.type.toString() === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(m.name + s);
  }
  return names;
}

it("queries only metrics the controller exports, one query or more per panel", async () => {
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
});
