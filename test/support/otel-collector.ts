import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { waitFor } from "./wait-for.ts";

const repo = join(import.meta.dirname, "..", "..");

/** A span as the collector's file exporter wrote it (OTLP JSON), its attributes as an object. */
export interface StoredSpan {
  traceId: string;
  spanId: string;
  parentId?: string;
  name: string;
  /** The resource's service.name: which component sent it. */
  service: string;
  /** Every attribute of the resource that sent it (service.name, k8s.pod.name, …). */
  resource: Record<string, unknown>;
  attributes: Record<string, unknown>;
}

export interface RunningCollector {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the components (OTLP over HTTP). */
  otlpEndpoint: string;
  /** Every span the collector has written so far. */
  spans(): StoredSpan[];
  stop(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: { key: string; value: AnyValue }[];
      }[];
    }[];
  }[];
}

// OTLP JSON carries 64-bit integers as strings; the tests compare numbers.
const valueOf = (v: AnyValue): unknown =>
  v.intValue !== undefined ? Number(v.intValue) : (v.stringValue ?? v.boolValue ?? v.doubleValue);
const attributesOf = (list: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/**
 * The OpenTelemetry Collector (built from its Go modules by hack/tools.sh ensure: the OTLP receiver and the contrib
 * file exporter) on loopback: OTLP/HTTP in, every span out to a JSON-lines file this process reads. Nothing else
 * listens (the collector's own telemetry is off).
 */
export async function startCollector(): Promise<RunningCollector> {
  const bin = join(execFileSync("bash", ["hack/tools.sh", "path"], { cwd: repo, encoding: "utf8" }).trim(), "otelcol");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-otelcol-"));
  const out = join(dir, "traces.jsonl");
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `receivers:
  otlp:
    protocols: { http: { endpoint: "127.0.0.1:${port}" } }
exporters:
  file: { path: "${out}", flush_interval: 50ms }
service:
  pipelines:
    traces: { receivers: [otlp], exporters: [file] }
  telemetry:
    metrics: { level: none }
    logs: { level: warn }
`,
  );
  const child = spawn(bin, ["--config", config], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const otlpEndpoint = `http://127.0.0.1:${port}`;
  try {
    // An empty OTLP/JSON export: 200 once the receiver listens.
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
      const res = await fetch(`${otlpEndpoint}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).catch(() => undefined);
      return res?.ok ? true : undefined;
    }, 30_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`the collector did not start: ${stderr}`, { cause: error });
  }
  return {
    otlpEndpoint,
    spans() {
      if (!existsSync(out)) return [];
      const lines = readFileSync(out, "utf8").split("\n").filter(Boolean);
      return lines.flatMap((line) =>
        ((JSON.parse(line) as OtlpJson).resourceSpans ?? []).flatMap((rs) => {
          const resource = attributesOf(rs.resource?.attributes);
          const service = String(resource["service.name"] ?? "");
          return (rs.scopeSpans ?? []).flatMap((ss) =>
            (ss.spans ?? []).map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentId: s.parentSpanId } : {}),
              name: s.name,
              service,
              resource,
              attributes: attributesOf(s.attributes),
            })),
          );
        }),
      );
    },
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        };
        if (child.exitCode !== null) return done();
        child.once("exit", done);
        child.kill("SIGTERM");
      }),
  };
}
