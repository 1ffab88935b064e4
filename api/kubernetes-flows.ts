import { randomUUID } from "node:crypto";
import { API_VERSION } from "../core/api-group.ts";
import type { FlowRunState } from "../core/flow/decide-flow.ts";
import { flowDefinition } from "../core/flow/definition.ts";
import { feedbackOutcome } from "../core/flow/outcomes.ts";
import { judgeFlow } from "../core/flow/problems.ts";
import type { Json } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import { decodeFlow, decodeFlowExecution, type CachedFlow, type CachedFlowExecution } from "../kube/flow-objects.ts";
import { methodResultName } from "../kube/flow-names.ts";
import {
  ANNOTATION_TRACEPARENT,
  FLOW_EXECUTIONS,
  FLOWS,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  resourcePath,
} from "../kube/resources.ts";
import { isConflict, KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import type { KubeAccess } from "../kube/runtime/kubeconfig.ts";
import { Informer } from "../kube/runtime/informer.ts";
import { readThrough } from "../kube/runtime/read-through.ts";
import { decodedOrUndefined, isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedTaskResult } from "../kube/typed-objects.ts";
import { traceparentOf } from "../platform/telemetry/trace-context.ts";
import { ApiError } from "./errors.ts";
import type { FlowBackend, FlowKickoffExtras, FlowRunEvent, FlowRunView, LoadedFlow } from "./flow-backend.ts";

/**
 * The flow routes' backend in cluster mode: Flows (those Ready) and FlowExecutions of one namespace in informer caches;
 * a kickoff creates a FlowExecution, `/resume` appends to its spec.feedback, stop sets spec.stop. The controller runs
 * the graph (controller/flow-run-reconciler.ts); each method's output is read from its CrewTaskResult.
 */
export class KubernetesFlows implements FlowBackend {
  private readonly flows: Informer<CachedFlow | Undecodable>;
  private readonly runs: Informer<CachedFlowExecution | Undecodable>;
  private readonly results: Pick<Informer<CachedTaskResult | Undecodable>, "byIndex" | "on">;
  private readonly client: Pick<KubeClient, "create" | "mergePatch" | "get" | "list" | "watch">;
  private readonly namespace: string;
  private readonly listeners = new Map<string, Set<() => void>>();

  constructor(o: {
    client: Pick<KubeClient, "create" | "mergePatch" | "get" | "list" | "watch">;
    namespace: string;
    log: Logger;
    /** The API's results cache (indexed by execution name), which holds the methods' results too. */
    results: Pick<Informer<CachedTaskResult | Undecodable>, "byIndex" | "on">;
  }) {
    this.client = o.client;
    this.namespace = o.namespace;
    this.results = o.results;
    const base = { client: o.client, log: o.log };
    this.flows = new Informer({ ...base, path: resourcePath(FLOWS, o.namespace), transform: decodeFlow });
    this.runs = new Informer({
      ...base,
      path: resourcePath(FLOW_EXECUTIONS, o.namespace),
      transform: decodeFlowExecution,
    });
    this.runs.on((_event, run) => this.notify(run.metadata?.name));
    this.results.on((_event, result) => this.notify(result.metadata?.labels?.["kubecrew.io/execution"]));
  }

  /** Fills the caches (answers once both have synced). */
  async startCaches(): Promise<void> {
    await Promise.all([this.flows.start(), this.runs.start()]);
  }

  async close(): Promise<void> {
    await Promise.all([this.flows.stop(), this.runs.stop()]);
  }

  listFlows(): LoadedFlow[] {
    return this.flows.list(this.namespace).flatMap((f) => {
      const loaded = loadedFlow(f);
      return loaded ? [loaded] : [];
    });
  }

  getFlow(name: string): LoadedFlow | undefined {
    const flow = this.flows.get(this.namespace, name);
    return flow && loadedFlow(flow);
  }

  async kickoff(flow: LoadedFlow, state: Record<string, Json>, given: FlowKickoffExtras = {}): Promise<string> {
    const id = randomUUID();
    await this.client.create(resourcePath(FLOW_EXECUTIONS, this.namespace), {
      apiVersion: API_VERSION,
      kind: FLOW_EXECUTIONS.kind,
      metadata: {
        name: id,
        namespace: this.namespace,
        labels: { [LABEL_MANAGED_BY]: MANAGED_BY },
        // The trace the kickoff's span (the active one) began: the controller's spans of the run continue it.
        ...traceAnnotation(traceparentOf()),
      },
      spec: {
        flowRef: { name: flow.name },
        inputs: state,
        ...(given.meta ? { meta: given.meta } : {}),
        ...(given.webhooks ? { webhooks: given.webhooks } : {}),
        ...(given.requestedBy ? { requestedBy: given.requestedBy } : {}),
      },
    });
    return id;
  }

  async getRun(flow: string, id: string): Promise<FlowRunView | undefined> {
    const source = { cache: this.runs, client: this.client, type: FLOW_EXECUTIONS };
    const run = decodedOrUndefined(await readThrough(source, this.namespace, id));
    if (!run || run.spec.flowRef.name !== flow) return undefined;
    return runView(run, this.methodResults(id));
  }

  async resume(view: FlowRunView, feedback: string): Promise<{ outcome?: string }> {
    const run = decodedOrUndefined(this.runs.get(this.namespace, view.id));
    const waiting = run?.status?.waiting;
    if (!run || !waiting) throw new ApiError(409, "Conflict", "Execution is not in pending human input state");
    const answers = run.spec.feedback ?? [];
    if (!answers.some((a) => a.activation === waiting.activation)) {
      try {
        const patched = await this.client.mergePatch<KubeObject>(
          resourcePath(FLOW_EXECUTIONS, this.namespace, view.id),
          {
            metadata: { resourceVersion: run.metadata.resourceVersion },
            spec: { feedback: [...answers, { activation: waiting.activation, feedback }] },
          },
        );
        this.runs.upsert(patched);
      } catch (err) {
        if (isConflict(err)) throw new ApiError(409, "Conflict", "The execution changed meanwhile; try again");
        throw err;
      }
    }
    const definition = flowDefinition.safeParse(run.status?.definition);
    const method = definition.success ? definition.data.methods[waiting.method] : undefined;
    const outcome = method && feedbackOutcome(method, feedback);
    return outcome ? { outcome } : {};
  }

  async stop(view: FlowRunView): Promise<void> {
    const patched = await this.client.mergePatch<KubeObject>(resourcePath(FLOW_EXECUTIONS, this.namespace, view.id), {
      spec: { stop: true },
    });
    this.runs.upsert(patched);
  }

  onChange(id: string, listener: () => void): () => void {
    const set = this.listeners.get(id) ?? new Set();
    set.add(listener);
    this.listeners.set(id, set);
    return () => {
      set.delete(listener);
      if (!set.size) this.listeners.delete(id);
    };
  }

  private notify(id: string | undefined): void {
    if (id) for (const listener of this.listeners.get(id) ?? []) listener();
  }

  private methodResults(id: string): Map<string, CachedTaskResult> {
    const byName = new Map<string, CachedTaskResult>();
    for (const r of this.results.byIndex(id)) if (!isUndecodable(r)) byName.set(r.metadata.name, r);
    return byName;
  }
}

const traceAnnotation = (traceparent: string | undefined) =>
  traceparent ? { annotations: { [ANNOTATION_TRACEPARENT]: traceparent } } : {};

/** A Flow the API serves: one whose Ready condition is True (its document judged by the controller). */
function loadedFlow(flow: CachedFlow | Undecodable): LoadedFlow | undefined {
  if (isUndecodable(flow)) return undefined;
  const ready = flow.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status !== "True" || ready.observedGeneration !== flow.metadata.generation) return undefined;
  const judged = judgeFlow(flow.spec);
  return judged.ok ? { name: flow.metadata.name, definition: judged.definition, file: "" } : undefined;
}

/** A FlowExecution as the flow routes read a run: outputs from the methods' results, events from its method runs. */
export function runView(run: CachedFlowExecution, results: Map<string, CachedTaskResult>): FlowRunView {
  const status = run.status ?? {};
  const graph = status.graph as unknown as FlowRunState | undefined;
  const outputs: Record<string, Json> = {};
  const methods = status.methods ?? [];
  for (const m of methods) {
    const result = results.get(methodResultName(run.metadata.name, m.id));
    if (result?.spec.jsonDict && !result.spec.error) outputs[m.method] = (result.spec.jsonDict.output ?? null) as Json;
  }
  const lastMethod = graph?.completed.at(-1);
  const created = run.metadata.creationTimestamp ?? new Date(0).toISOString();
  const phase = status.phase === undefined || status.phase === "Pending" ? "Running" : status.phase;
  return {
    id: run.metadata.name,
    flow: run.spec.flowRef.name,
    phase,
    created,
    state: run.spec.inputs,
    outputs,
    methods: methods.map((m) => ({ ...m })),
    outcomes: graph?.outcomes ?? [],
    ...(status.waiting
      ? {
          waiting: {
            method: status.waiting.method,
            message: status.waiting.message,
            emit: status.waiting.emit,
            output: status.waiting.output ?? null,
          },
        }
      : {}),
    ...(lastMethod !== undefined && outputs[lastMethod] !== undefined ? { result: outputs[lastMethod] } : {}),
    ...(status.error ? { error: status.error } : {}),
    executionTime: status.executionTime ?? 0,
    startedAt: Date.parse(status.startTime ?? created),
    events: runEvents(run),
  };
}

/** The run's events, in the order they happened (each method's start and end, a wait for feedback, the end). */
function runEvents(run: CachedFlowExecution): FlowRunEvent[] {
  const status = run.status ?? {};
  const timed: { at: string; order: number; event: Omit<FlowRunEvent, "id"> }[] = [];
  for (const [order, m] of (status.methods ?? []).entries()) {
    timed.push({
      at: m.startTime,
      order,
      event: { type: "method_started", method: m.method, data: { activation: m.id } },
    });
    if (m.phase === "Succeeded" || m.phase === "Failed") {
      const type = m.phase === "Succeeded" ? "method_completed" : "method_failed";
      const data = {
        activation: m.id,
        ...(m.outcome ? { outcome: m.outcome } : {}),
        ...(m.error ? { error: m.error } : {}),
      };
      timed.push({ at: m.completionTime ?? m.startTime, order, event: { type, method: m.method, data } });
    }
  }
  if (status.waiting) {
    const { method, message, emit } = status.waiting;
    timed.push({
      at: "\uffff",
      order: 0,
      event: { type: "human_feedback_requested", method, data: { message, emit } },
    });
  }
  if (status.phase === "Succeeded" || status.phase === "Failed" || status.phase === "Stopped") {
    const data = { phase: status.phase, ...(status.error ? { error: status.error } : {}) };
    timed.push({ at: "\uffff", order: Number.MAX_SAFE_INTEGER, event: { type: "flow_finished", data } });
  }
  timed.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.order - b.order));
  return timed.map((t, i) => ({ id: i + 1, ...t.event }));
}

/** The cluster's flows for the API, its caches filled; `results` is the API's results cache (cluster-caches.ts). */
export async function createKubernetesFlows(o: {
  kubeConfig: KubeAccess;
  namespace: string;
  log: Logger;
  results: Pick<Informer<CachedTaskResult | Undecodable>, "byIndex" | "on">;
}): Promise<KubernetesFlows> {
  const flows = new KubernetesFlows({ ...o, client: new KubeClient(o.kubeConfig) });
  await flows.startCaches();
  return flows;
}
