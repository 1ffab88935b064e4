/**
 * The chart's telemetry values: one OTLP endpoint for the API, the controller (which hands it on to task pods) and
 * the integrations service; prompts on spans only when asked; the price table as the API's KUBECREW_LLM_PRICES. By
 * default none of it is set (no tracing, no connection), and the schema refuses an endpoint that is not a URL.
 */
import { describe, expect, it } from "vitest";
import { container, envOf, find, render, template } from "./support/helm.ts";

const env = (values: object | undefined, deployment: string, name: string) =>
  envOf(container(find(render(values ? { values } : {}), "Deployment", deployment))).get(name)?.value;
const DEPLOYMENTS = ["kubecrew-api", "kubecrew-controller", "kubecrew-integrations"];

describe("telemetry values", () => {
  it("set nothing by default", () => {
    for (const d of DEPLOYMENTS) expect(env(undefined, d, "OTEL_EXPORTER_OTLP_ENDPOINT"), d).toBeUndefined();
    expect(env(undefined, "kubecrew-api", "KUBECREW_LLM_PRICES")).toBeUndefined();
    expect(env(undefined, "kubecrew-controller", "KUBECREW_TRACE_CONTENT")).toBeUndefined();
  });

  it("give every component the one endpoint, the controller traceContent, the API the prices as JSON", () => {
    const values = {
      telemetry: {
        otlpEndpoint: "http://otel-collector.observability:4318",
        traceContent: true,
        llmPrices: { "gpt-4o-mini": { input: 0.15, output: 0.6 } },
      },
    };
    for (const d of DEPLOYMENTS)
      expect(env(values, d, "OTEL_EXPORTER_OTLP_ENDPOINT"), d).toBe("http://otel-collector.observability:4318");
    expect(env(values, "kubecrew-controller", "KUBECREW_TRACE_CONTENT")).toBe("true");
    expect(JSON.parse(env(values, "kubecrew-api", "KUBECREW_LLM_PRICES")!)).toEqual(values.telemetry.llmPrices);
  });

  it("refuses an endpoint that is not an http(s) URL and a price without its output", () => {
    for (const telemetry of [
      { otlpEndpoint: "otel-collector:4318" },
      { llmPrices: { "gpt-4o-mini": { input: 0.15 } } },
    ]) {
      const result = template({ values: { telemetry } });
      expect(result.status, JSON.stringify(telemetry)).not.toBe(0);
    }
  });
});
