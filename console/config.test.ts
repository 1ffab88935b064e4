import { expect, it } from "vitest";
import { parseConfig } from "../core/config.ts";
import { consoleSettingsSchema } from "./config.ts";

const settings = (env: Record<string, string>) => parseConfig(consoleSettingsSchema, env);

it("takes KUBECREW_TRACE_URL as the trace link's template, and none when unset", () => {
  const template = "https://jaeger.example.com/trace/{trace_id}";
  expect(settings({ KUBECREW_TRACE_URL: template }).traceUrl).toBe(template);
  expect(settings({}).traceUrl).toBeUndefined();
});

it.each([
  ["without {trace_id}", "https://jaeger.example.com/search", /must contain \{trace_id\}/],
  ["not http(s)", "javascript:alert('{trace_id}')", /KUBECREW_TRACE_URL/],
  ["not a URL", "{trace_id}", /KUBECREW_TRACE_URL/],
])("refuses a KUBECREW_TRACE_URL %s, naming the variable", (_, value, message) => {
  expect(() => settings({ KUBECREW_TRACE_URL: value })).toThrow(message);
});
