import { SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { Logger } from "../core/logger.ts";
import {
  contextFromTraceparent,
  TRACEPARENT_ENV,
  traceIdOf,
  traceparentOf,
} from "../platform/telemetry/trace-context.ts";
import { TRACER_NAME } from "../platform/telemetry/tracing.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { ANNOTATION_TRACEPARENT } from "../kube/resources.ts";

/**
 * The controller's spans of an execution, each a child of the kickoff's span, whose W3C traceparent the API wrote on
 * the CrewExecution (kubecrew.io/traceparent): a task's Job being started — whose TRACEPARENT the runner continues
 * the trace under — and each webhook delivery attempt. Reconciles come and go, so no span is held across them. With
 * tracing off, or no traceparent on the execution, the spans are no-ops and the Job gets no TRACEPARENT.
 */

/** The traceparent the kickoff left on the execution, if any. */
export function executionTraceparent(execution: Pick<KubeObject, "metadata">): string | undefined {
  return execution.metadata?.annotations?.[ANNOTATION_TRACEPARENT];
}

/** The controller's logger for an execution's lines: each names the kickoff's trace (`trace_id`) when it has one. */
export function executionLogger(log: Logger, execution: Pick<KubeObject, "metadata">): Logger {
  const traceId = traceIdOf(executionTraceparent(execution));
  return traceId ? log.child({ trace_id: traceId }) : log;
}

/** Starts the span of a task's Job start; the Job's runner container gets its TRACEPARENT. End it once created. */
export function startTaskSpan(
  traceparent: string | undefined,
  attributes: { execution: string; task: string },
  job: KubeObject,
): Span {
  const span = trace.getTracer(TRACER_NAME).startSpan(
    `start_task ${attributes.task}`,
    {
      attributes: {
        "kubecrew.execution": attributes.execution,
        "kubecrew.task": attributes.task,
        "k8s.job.name": job.metadata?.name ?? "",
      },
    },
    contextFromTraceparent(traceparent),
  );
  const value = traceparent ? traceparentOf(span) : undefined;
  const container = (job.spec as { template?: { spec?: { containers?: { env?: unknown[] }[] } } } | undefined)?.template
    ?.spec?.containers?.[0];
  if (value && container) container.env = [...(container.env ?? []), { name: TRACEPARENT_ENV, value }];
  return span;
}

/** Runs one webhook delivery attempt in a span (its kind and outcome; never its URL's query or payload). */
export async function inWebhookSpan<T extends { ok: boolean }>(
  traceparent: string | undefined,
  attributes: { execution: string; hook: string; kind: string; attempt: number },
  send: () => Promise<T>,
): Promise<T> {
  const span = trace.getTracer(TRACER_NAME).startSpan(
    `webhook ${attributes.kind}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "kubecrew.execution": attributes.execution,
        "kubecrew.webhook.hook": attributes.hook,
        "kubecrew.webhook.attempt": attributes.attempt,
      },
    },
    contextFromTraceparent(traceparent),
  );
  try {
    const outcome = await send();
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: "not delivered" });
    return outcome;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
    throw error;
  } finally {
    span.end();
  }
}
