import { trace } from "@opentelemetry/api";
import type { FlowExecutionStatus } from "../core/flow/flow-resources.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { recordFinishedFlowRunSpan } from "../platform/telemetry/flow-run-span.ts";
import { spanIdFor } from "../platform/telemetry/span-ids.ts";
import { contextFromTraceparent } from "../platform/telemetry/trace-context.ts";
import { executionTraceparent } from "./execution-trace.ts";

/**
 * The controller's span of a flow run, as execution-trace.ts does an execution's: the API wrote the flow kickoff
 * span's traceparent on the FlowExecution (kubecrew.io/traceparent); under it is the run's span, `flow <flow>`, whose
 * id is derived from the FlowExecution's uid (the same in every replica and after a restart), so the run's webhook
 * deliveries and the child CrewExecutions its methods create name it as their parent from the start; the span itself
 * is recorded once, by the reconcile that writes the run's end. Without a traceparent on the run nothing is traced.
 */

type RunMeta = Pick<KubeObject, "metadata">;

/** The id of the run's span: the same for one FlowExecution (its uid) in every process. */
export function flowRunSpanId(run: RunMeta): string {
  return spanIdFor(`kubecrew.io/FlowExecution/${run.metadata?.uid ?? ""}`);
}

/** The W3C traceparent of the run's span (its deliveries' and child executions' parent); undefined without a trace. */
export function flowRunSpanTraceparent(run: RunMeta): string | undefined {
  const kickoff = trace.getSpanContext(contextFromTraceparent(executionTraceparent(run)));
  if (!kickoff) return undefined;
  const flags = kickoff.traceFlags.toString(16).padStart(2, "0");
  return `00-${kickoff.traceId}-${flowRunSpanId(run)}-${flags}`;
}

/**
 * Records the run's span, `flow <flow>`, from the FlowExecution's creation to its completion, under the kickoff's
 * span: call it once, when the run's end was written. Nothing when the run has no trace or tracing is off.
 */
export function recordFlowRunSpan(run: RunMeta, flow: string, status: FlowExecutionStatus): void {
  const kickoff = contextFromTraceparent(executionTraceparent(run));
  if (trace.getSpanContext(kickoff) === undefined || !status.phase) return;
  const created = run.metadata?.creationTimestamp;
  const endTime = status.completionTime ? new Date(status.completionTime) : new Date();
  recordFinishedFlowRunSpan({
    flow,
    execution: run.metadata?.name ?? "",
    spanId: flowRunSpanId(run),
    parent: kickoff,
    startTime: created ? new Date(created) : endTime,
    endTime,
    phase: status.phase,
    ...(status.error ? { error: status.error } : {}),
    attributes: { "k8s.namespace.name": run.metadata?.namespace ?? "" },
  });
}
