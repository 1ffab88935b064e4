/**
 * The chart's telemetry values: one OTLP endpoint for the API, the controller (which hands it on to task pods) and
 * the integrations service; prompts on spans only when asked; the price table as the API's and the controller's
 * KUBECREW_LLM_PRICES; the console's trace link as the API's KUBECREW_TRACE_URL. By
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
    expect(env(undefined, "kubecrew-controller", "KUBECREW_LLM_PRICES")).toBeUndefined();
    expect(env(undefined, "kubecrew-api", "KUBECREW_TRACE_URL")).toBeUndefined();
    expect(env(undefined, "kubecrew-controller", "KUBECREW_TRACE_CONTENT")).toBeUndefined();
  });

  it("give every component the one endpoint, the controller traceContent, the API and the controller the prices as JSON, the API the trace link", () => {
    const values = {
      telemetry: {
        otlpEndpoint: "http://otel-collector.observability:4318",
        traceContent: true,
        llmPrices: { "gpt-4o-mini": { input: 0.15, output: 0.6 } },
        traceUrl: "https://jaeger.example.com/trace/{trace_id}",
      },
    };
    for (const d of DEPLOYMENTS)
      expect(env(values, d, "OTEL_EXPORTER_OTLP_ENDPOINT"), d).toBe("http://otel-collector.observability:4318");
    expect(env(values, "kubecrew-controller", "KUBECREW_TRACE_CONTENT")).toBe("true");
    expect(JSON.parse(env(values, "kubecrew-api", "KUBECREW_LLM_PRICES")!)).toEqual(values.telemetry.llmPrices);
    expect(JSON.parse(env(values, "kubecrew-controller", "KUBECREW_LLM_PRICES")!)).toEqual(values.telemetry.llmPrices);
    expect(env(values, "kubecrew-api", "KUBECREW_TRACE_URL")).toBe("https://jaeger.example.com/trace/{trace_id}");
  });

  it("refuses an endpoint that is not an http(s) URL, a trace link without {trace_id} and a price without its output", () => {
    for (const telemetry of [
      { otlpEndpoint: "otel-collector:4318" },
      { traceUrl: "https://jaeger.example.com/search" },
      { traceUrl: "javascript:alert('{trace_id}')" },
      { llmPrices: { "gpt-4o-mini": { input: 0.15 } } },
    ]) {
      const result = template({ values: { telemetry } });
      expect(result.status, JSON.stringify(telemetry)).not.toBe(0);
    }
  });
});
