import { context, propagation, trace, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { z } from "zod";
import { ConfigError } from "../../core/config.ts";
import { spanIdGenerator } from "./span-ids.ts";
import { TRACEPARENT_ENV } from "./trace-context.ts";

/** The tracer every kubecrew component takes its spans from. */
export const TRACER_NAME = "kubecrew";

export type TelemetryEnv = Readonly<Record<string, string | undefined>>;

/** The OpenTelemetry variables read (the specification's names): what each means, for docs/configuration.md. */
export const tracingVariables = z.object({
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .string()
    .optional()
    .describe(
      "Where spans are sent, as given (OTLP over HTTP with protobuf); no spans are exported without an endpoint.",
    ),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .optional()
    .describe("The OTLP base URL: spans go to its `/v1/traces` when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not set."),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
    .string()
    .optional()
    .describe("`http/protobuf`, the only protocol kubecrew exports with; another value stops the component."),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .string()
    .optional()
    .describe("As OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, for every signal."),
  OTEL_SDK_DISABLED: z.string().optional().describe("`true` turns tracing off whatever the endpoint."),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .optional()
    .describe("`key=value,…` (values percent-encoded) added to the resource of every span."),
  OTEL_SERVICE_NAME: z.string().optional().meta({
    description: "The service name on the spans.",
    defaultText: "`kubecrew-<component>`; `kubecrew` (dev)",
  }),
  [TRACEPARENT_ENV]: z
    .string()
    .optional()
    .describe("The W3C trace context a task's spans continue (set by the controller and kubecrew dev for the runner)."),
});

export interface Tracing {
  /** False when no OTLP endpoint is set: no exporter, no provider, spans are the API's no-op spans. */
  enabled: boolean;
  tracer: Tracer;
  /** Sends what is buffered and stops; never throws (telemetry must not fail a component). */
  stop(): Promise<void>;
}

/**
 * Where traces go, from the standard variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces; undefined when neither is set or OTEL_SDK_DISABLED=true.
 */
export function tracesEndpoint(env: TelemetryEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}

/** OTEL_RESOURCE_ATTRIBUTES: `key=value,…`, values percent-encoded (the specification's format). */
function resourceAttributes(env: TelemetryEnv): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    attributes[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return attributes;
}

/**
 * Starts tracing for one component when an OTLP endpoint is set (OTLP over HTTP with protobuf, the specification's
 * default protocol): registers the tracer provider, the W3C trace-context propagator and an AsyncLocalStorage context
 * manager globally, as OpenTelemetry's API expects. With no endpoint nothing is created and no connection is made.
 * `exporter` replaces the OTLP exporter (tests).
 */
export function startTracing(options: { env: TelemetryEnv; serviceName: string; exporter?: SpanExporter }): Tracing {
  const { env } = options;
  const url = tracesEndpoint(env);
  if (!url && !options.exporter) return { enabled: false, tracer: trace.getTracer(TRACER_NAME), stop: async () => {} };
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== "http/protobuf") {
    throw new ConfigError(
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      `kubecrew exports traces with http/protobuf only, not ${protocol}`,
    );
  }
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...resourceAttributes(env),
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || options.serviceName,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: options.exporter ?? new OTLPTraceExporter({ url: url! }) })],
    // Random ids, but for the few spans whose id is chosen before they start (span-ids.ts).
    idGenerator: spanIdGenerator,
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    enabled: true,
    tracer: provider.getTracer(TRACER_NAME),
    stop: async () => {
      await provider.shutdown().catch(() => {});
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
