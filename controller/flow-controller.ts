import type { Logger } from "../core/logger.ts";
import { declaredCrewNames } from "../core/flow/declared-crews.ts";
import { LABEL_FLOW, LABEL_FLOW_EXECUTION } from "../kube/resources.ts";
import type { KubeClient } from "../kube/runtime/client.ts";
import type { EventRecorder } from "../kube/runtime/events.ts";
import { cacheKey, objectKey } from "../kube/runtime/informer.ts";
import { isUndecodable } from "../kube/runtime/undecodable.ts";
import { WorkQueue } from "../kube/runtime/work-queue.ts";
import { runWorker } from "../kube/runtime/worker.ts";
import { byExecution, type Caches } from "./caches.ts";
import { createFlowCaches, type FlowCaches } from "./flow-caches.ts";
import { FlowReconciler } from "./flow-reconciler.ts";
import { FlowRunReconciler } from "./flow-run-reconciler.ts";
import { FlowWebhooks } from "./flow-webhooks.ts";
import { changed } from "./triggers.ts";
import type { WebhookDispatcher } from "./webhooks.ts";

/** Items of one `each` running at once. */
const EACH_CONCURRENCY = 4;

/**
 * The flow side of the controller, wired apart from the crews': its caches (Flows, FlowExecutions), two queues, and
 * which change queues which key — a Flow's own change; a run's own change, its results' (label kubecrew.io/execution)
 * and its child executions' (label kubecrew.io/flow-execution); a Flow that appears, for the runs waiting for it; a
 * Crew that a Flow's from_declaration names, for that Flow.
 */
export function flowController(o: {
  client: KubeClient;
  caches: Caches;
  events: Pick<EventRecorder, "record">;
  log: Logger;
  namespace: string;
  watchTimeoutSeconds: number;
  now: () => Date;
  /** The controller's webhook dispatcher and signing Secrets' key: a run's webhooks go out as an execution's. */
  webhooks: Pick<WebhookDispatcher, "enqueue">;
  webhookSecretKey: string;
  /** On the mock provider, how long a human_feedback waits for a person before the mock answers (0: for ever). */
  mockFeedbackAfterMs?: number;
}) {
  const flowCaches: FlowCaches = createFlowCaches(o);
  const queues = { flows: new WorkQueue(), runs: new WorkQueue() };
  const webhooks = new FlowWebhooks({
    client: o.client,
    flows: flowCaches.flows,
    runs: flowCaches.runs,
    results: o.caches.results,
    executions: o.caches.executions,
    dispatcher: o.webhooks,
    secretKey: o.webhookSecretKey,
    log: o.log,
  });
  const flows = new FlowReconciler({
    client: o.client,
    flows: flowCaches.flows,
    crews: o.caches.crews,
    events: o.events,
    now: o.now,
    signingSecrets: webhooks,
  });
  const runs = new FlowRunReconciler({
    client: o.client,
    flows: flowCaches.flows,
    runs: flowCaches.runs,
    executions: o.caches.executions,
    results: o.caches.results,
    crews: o.caches.crews,
    eachConcurrency: EACH_CONCURRENCY,
    now: o.now,
    log: o.log,
    webhooks,
    ...(o.mockFeedbackAfterMs ? { mockFeedbackAfterMs: o.mockFeedbackAfterMs } : {}),
  });
  const queueRun = (key: string) => {
    const [namespace, name] = key.split("/") as [string, string];
    if (flowCaches.runs.get(namespace, name)) queues.runs.add(key);
  };
  flowCaches.flows.on((event, flow, previous) => {
    if (!changed(event, flow, previous)) return;
    if (event !== "delete") queues.flows.add(objectKey(flow));
    for (const run of flowCaches.runs.list(flow.metadata?.namespace)) {
      if (!isUndecodable(run) && run.spec.flowRef.name === flow.metadata?.name && !run.status?.definition) {
        queues.runs.add(objectKey(run));
      }
    }
  });
  // A Crew a flow's from_declaration names that appears, changes or goes: the flow is judged again (its Ready).
  o.caches.crews.on((event, crew, previous) => {
    if (!changed(event, crew, previous) || crew.metadata?.labels?.[LABEL_FLOW]) return;
    for (const flow of flowCaches.flows.list(crew.metadata?.namespace)) {
      if (!isUndecodable(flow) && declaredCrewNames(flow.spec).includes(crew.metadata?.name ?? "")) {
        queues.flows.add(objectKey(flow));
      }
    }
  });
  flowCaches.runs.on((event, run, previous) => {
    if (event !== "delete" && changed(event, run, previous)) queues.runs.add(objectKey(run));
  });
  // A method run's child reporting a step: its run is looked at when it sends steps (a step webhook is due).
  const queueRunOfChild = (key: string) => {
    const [namespace, name] = key.split("/") as [string, string];
    const child = o.caches.executions.get(namespace, name);
    const run = child && !isUndecodable(child) ? child.metadata.labels?.[LABEL_FLOW_EXECUTION] : undefined;
    const held = run ? flowCaches.runs.get(namespace, run) : undefined;
    if (held && !isUndecodable(held) && held.spec.webhooks?.step) queues.runs.add(cacheKey(namespace, run!));
  };
  o.caches.results.on((event, result, previous) => {
    if (!changed(event, result, previous)) return;
    for (const key of byExecution(result)) {
      queueRun(key);
      queueRunOfChild(key);
    }
  });
  o.caches.executions.on((event, execution, previous) => {
    const run = execution.metadata?.labels?.[LABEL_FLOW_EXECUTION];
    if (run && changed(event, execution, previous)) queueRun(cacheKey(execution.metadata!.namespace!, run));
  });
  return {
    /** A flow run's webhook deliveries: signed with the flow's secret, recorded on the run. */
    webhooks,
    informers: Object.entries(flowCaches) as [string, FlowCaches[keyof FlowCaches]][],
    /** One worker per queue (a flow's methods are few; a run's look is quick), until the queues shut down. */
    startWorkers: (owns?: (key: string) => boolean): Promise<void>[] => [
      runWorker({ queue: queues.flows, reconciler: flows, log: o.log, kind: "flow", ...(owns ? { owns } : {}) }),
      runWorker({ queue: queues.runs, reconciler: runs, log: o.log, kind: "flowExecution", ...(owns ? { owns } : {}) }),
      runWorker({ queue: queues.runs, reconciler: runs, log: o.log, kind: "flowExecution", ...(owns ? { owns } : {}) }),
    ],
    shutDown: () => {
      queues.flows.shutDown();
      queues.runs.shutDown();
    },
  };
}
