import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { contextFromTraceparent, traceIdOf, traceparentOf } from "./trace-context.ts";
import { startTracing, tracesEndpoint } from "./tracing.ts";

/** Every TCP connection this process opens while `run` runs (Node publishes each client socket on this channel). */
async function connectionsDuring(run: () => Promise<void>): Promise<number> {
  let sockets = 0;
  const count = () => sockets++;
  subscribe("net.client.socket", count);
  try {
    await run();
  } finally {
    unsubscribe("net.client.socket", count);
  }
  return sockets;
}

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe("startTracing", () => {
  it("with no OTLP endpoint starts no exporter and opens no connection", async () => {
    const connections = await connectionsDuring(async () => {
      const tracing = startTracing({ env: { OTEL_SERVICE_NAME: "x" }, serviceName: "kubecrew-test" });
      expect(tracing.enabled).toBe(false);
      const span = tracing.tracer.startSpan("kickoff");
      expect(span.isRecording()).toBe(false);
      span.end();
      await tracing.stop();
    });
    expect(connections).toBe(0);
  });

  it("with an endpoint exports the spans over OTLP/HTTP as protobuf (the connection the test above would see)", async () => {
    const received: { path?: string; type?: string; bytes: number }[] = [];
    server = createServer((req, res) => {
      let bytes = 0;
      req.on("data", (chunk: Buffer) => (bytes += chunk.length));
      req.on("end", () => {
        received.push({ path: req.url, type: req.headers["content-type"], bytes });
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const connections = await connectionsDuring(async () => {
      const tracing = startTracing({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/` },
        serviceName: "kubecrew-test",
      });
      expect(tracing.enabled).toBe(true);
      const span = tracing.tracer.startSpan("kickoff");
      expect(span.isRecording()).toBe(true);
      span.end();
      await tracing.stop();
    });
    expect(connections).toBeGreaterThan(0);
    expect(received).toEqual([{ path: "/v1/traces", type: "application/x-protobuf", bytes: expect.any(Number) }]);
    expect(received[0]!.bytes).toBeGreaterThan(0);
  });

  it("refuses a protocol it does not speak, naming the variable", () => {
    expect(() =>
      startTracing({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        serviceName: "x",
      }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL: .*http\/protobuf/);
  });

  it("takes the traces endpoint as given, the base endpoint with /v1/traces, neither when disabled", () => {
    expect(tracesEndpoint({})).toBeUndefined();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toBe("http://c:4318/v1/traces");
    expect(
      tracesEndpoint({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x",
      }),
    ).toBe("http://t/x");
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });
});

describe("trace context", () => {
  const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

  it("carries a W3C traceparent into a span's parent and out again", async () => {
    const tracing = startTracing({
      env: {},
      serviceName: "x",
      exporter: { export: (_s, done) => done({ code: 0 }), shutdown: async () => {} },
    });
    const span = tracing.tracer.startSpan("task", {}, contextFromTraceparent(traceparent));
    expect(span.spanContext().traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(traceIdOf(traceparentOf(span))).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(traceparentOf(span)).not.toBe(traceparent);
    span.end();
    await tracing.stop();
  });

  it("reads no trace id from a malformed traceparent", () => {
    expect(traceIdOf("00-zz-b7ad6b7169203331-01")).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });
});
