import { ROOT_CONTEXT, trace, type Context, type Span } from "@opentelemetry/api";
import type { ExecutionStatus } from "../core/execution.ts";
import type { Logger } from "../core/logger.ts";
import { recordFinishedExecutionSpan } from "../platform/telemetry/execution-span.ts";
import { spanIdFor } from "../platform/telemetry/span-ids.ts";
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
 * The controller's spans of an execution. The API wrote the kickoff span's W3C traceparent on the CrewExecution
 * (kubecrew.io/traceparent); under it is the execution's span, `execution <crew>`, and under that the controller's
 * other spans: a task's Job being started — whose TRACEPARENT the runner continues the trace under — and each webhook
 * delivery attempt. Reconciles come and go, so no span is held across them: the execution span's id is derived from
 * the CrewExecution's uid, the same in every replica and after any restart, so its children name it from the start,
 * and the span itself is recorded once, by the reconcile that writes the finished phase (a write that succeeds once).
 * With tracing off, or no traceparent on the execution, the spans are no-ops and the Job gets no TRACEPARENT.
 */

type ExecutionMeta = Pick<KubeObject, "metadata">;

/** The traceparent the kickoff left on the execution, if any. */
export function executionTraceparent(execution: ExecutionMeta): string | undefined {
  return execution.metadata?.annotations?.[ANNOTATION_TRACEPARENT];
}

/** The controller's logger for an execution's lines: each names the kickoff's trace (`trace_id`) when it has one. */
export function executionLogger(log: Logger, execution: ExecutionMeta): Logger {
  const traceId = traceIdOf(executionTraceparent(execution));
  return traceId ? log.child({ trace_id: traceId }) : log;
}

/** The id of the execution's span: the same for one CrewExecution (its uid) in every process. */
export function executionSpanId(execution: ExecutionMeta): string {
  return spanIdFor(`kubecrew.io/CrewExecution/${execution.metadata?.uid ?? ""}`);
}

/** The execution's span as the parent of the controller's other spans; the root context when it has no trace. */
function executionContext(execution: ExecutionMeta): Context {
  const kickoff = trace.getSpanContext(contextFromTraceparent(executionTraceparent(execution)));
  if (!kickoff) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { ...kickoff, spanId: executionSpanId(execution), isRemote: true });
}

/** The W3C traceparent of the execution's span (webhook deliveries are its children); undefined without a trace. */
export function executionSpanTraceparent(execution: ExecutionMeta): string | undefined {
  const span = trace.getSpanContext(executionContext(execution));
  return span && `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, "0")}`;
}

/**
 * Records the execution's span, `execution <crew>`, from its creation to its completion, under the kickoff's span:
 * call it once, when the finished phase was written. Nothing when the execution has no trace or tracing is off.
 */
export function recordExecutionSpan(execution: ExecutionMeta, crew: string, status: ExecutionStatus): void {
  const kickoff = contextFromTraceparent(executionTraceparent(execution));
  if (!trace.getSpanContext(kickoff) || !status.phase) return;
  const created = execution.metadata?.creationTimestamp;
  const endTime = status.completionTime ? new Date(status.completionTime) : new Date();
  recordFinishedExecutionSpan({
    crew,
    execution: execution.metadata?.name ?? "",
    spanId: executionSpanId(execution),
    parent: kickoff,
    startTime: created ? new Date(created) : endTime,
    endTime,
    phase: status.phase,
    ...(status.error ? { error: status.error } : {}),
    attributes: { "k8s.namespace.name": execution.metadata?.namespace ?? "" },
  });
}

/**
 * Starts the span of a task's Job start, a child of the execution's span; the Job's runner container gets its
 * TRACEPARENT. End it once created. When this controller does not trace, the runner continues the kickoff's trace.
 */
export function startTaskSpan(
  execution: ExecutionMeta,
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
    executionContext(execution),
  );
  const kickoff = executionTraceparent(execution);
  const value = !kickoff
    ? undefined
    : span.isRecording()
      ? traceparentOf(span)
      : traceparentOf(trace.getSpan(contextFromTraceparent(kickoff)));
  const container = (job.spec as { template?: { spec?: { containers?: { env?: unknown[] }[] } } } | undefined)?.template
    ?.spec?.containers?.[0];
  if (value && container) container.env = [...(container.env ?? []), { name: TRACEPARENT_ENV, value }];
  return span;
}
