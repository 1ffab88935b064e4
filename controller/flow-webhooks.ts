import type { FlowRunState } from "../core/flow/decide-flow.ts";
import { flowDefinition } from "../core/flow/definition.ts";
import { dueFlowWebhooks, type FlowMethodStep, type FlowRunForWebhooks } from "../core/flow-webhooks.ts";
import type { Json } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import { stepWireForm } from "../core/task-step.ts";
import { methodExecutionName, methodResultName } from "../kube/flow-names.ts";
import { FLOW_EXECUTIONS, FLOWS, LABEL_FLOW, LABEL_FLOW_EXECUTION, resourcePath } from "../kube/resources.ts";
import type { KubeApi, KubeObject } from "../kube/runtime/client.ts";
import { cacheKey, type Informer } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";
import { CrewSigningSecrets } from "./crew-signing-secret.ts";
import { WEBHOOKS_ANNOTATION } from "./execution-reconciler.ts";
import { flowRunSpanTraceparent } from "./flow-run-trace.ts";
import type { CachedFlow, CachedFlowExecution } from "./flow-caches.ts";
import { WEBHOOK_SECRET_ANNOTATION, WebhookSecrets } from "./webhook-secrets.ts";
import type { DeliveryResult, WebhookDelivery, WebhookDispatcher } from "./webhooks.ts";
import { traceparentField } from "../platform/telemetry/trace-context.ts";

/** The Secret whose key signs a flow's webhooks: the one its annotation names, else `<flow>-flow-webhook`. */
export const flowSigningSecretName = (flow: string, annotations: Record<string, string> | undefined) =>
  annotations?.[WEBHOOK_SECRET_ANNOTATION] ?? `${flow}-flow-webhook`;

export interface FlowWebhooksOptions {
  client: Pick<KubeApi, "get" | "create" | "delete" | "mergePatch">;
  flows: Pick<Informer<CachedFlow | Undecodable>, "get">;
  runs: Pick<Informer<CachedFlowExecution | Undecodable>, "get" | "upsert">;
  results: Pick<Informer<CachedTaskResult | Undecodable>, "byIndex">;
  /** The method runs' child executions, whose results hold the agents' steps. */
  executions: Pick<Informer<CachedExecution | Undecodable>, "list">;
  dispatcher: Pick<WebhookDispatcher, "enqueue">;
  /** The key in a signing Secret's data (KUBECREW_WEBHOOK_SECRET_KEY). */
  secretKey: string;
  log: Logger;
}

/**
 * A flow run's webhooks on a cluster, as a crew execution's: each look of the run reconciler hands the run here, and
 * the hooks core/flow-webhooks.ts finds due (not yet recorded on the run) go to the one webhook dispatcher — signed
 * with the flow's secret (a Secret the Flow names, else `<flow>-flow-webhook`, generated once per Flow and owned by
 * it), retried alike, delivered at least once with a stable delivery id — and are recorded when they end, in the
 * run's `kubecrew.io/webhook-deliveries` annotation, so a restarted controller does not send them again. With
 * tracing on, each attempt is a span under the run's span (flow-run-trace.ts), and its request carries the attempt
 * span's `traceparent`.
 */
export class FlowWebhooks {
  private readonly o: FlowWebhooksOptions;
  private readonly signing: CrewSigningSecrets;
  private readonly secrets: WebhookSecrets;
  private readonly records = new Map<string, Promise<void>>();

  constructor(options: FlowWebhooksOptions) {
    this.o = options;
    const owner = { type: FLOWS, label: LABEL_FLOW, secretName: flowSigningSecretName };
    this.signing = new CrewSigningSecrets({ ...options, owner });
    this.secrets = new WebhookSecrets({
      client: options.client,
      crews: options.flows as Pick<Informer<KubeObject>, "get">,
      secretKey: options.secretKey,
      secretName: flowSigningSecretName,
      ownerWord: "flow",
    });
  }

  /** Makes sure the Flow has a Secret to sign with (the flow reconciler asks, once per look at a Flow). */
  async ensureSigningSecret(flow: KubeObject): Promise<void> {
    await this.signing.ensure(flow);
  }

  secretFor(namespace: string, flow: string): Promise<string> {
    return this.secrets.secretFor(namespace, flow);
  }

  /** Hands the run's due hooks to the dispatcher (which sends each once per process). */
  enqueueDue(run: CachedFlowExecution): void {
    if (!run.spec.webhooks) return;
    const namespace = run.metadata.namespace ?? "";
    const results = new Map<string, CachedTaskResult>();
    for (const r of this.o.results.byIndex(cacheKey(namespace, run.metadata.name))) {
      if (!isUndecodable(r)) results.set(r.metadata.name, r);
    }
    const outputOf = (activation: string): Json | undefined => {
      const result = results.get(methodResultName(run.metadata.name, activation));
      return result && !result.spec.error && result.spec.jsonDict ? (result.spec.jsonDict.output ?? null) : undefined;
    };
    const steps = run.spec.webhooks.step ? this.stepsOf(run, outputOf) : undefined;
    for (const action of dueFlowWebhooks(forWebhooks(run, outputOf, steps), outputOf, delivered(run))) {
      this.o.dispatcher.enqueue({
        hook: action.hook,
        kind: action.kind,
        url: action.url,
        payload: action.payload,
        namespace,
        execution: run.metadata.name,
        executionUid: run.metadata.uid ?? "",
        crew: "",
        flow: run.spec.flowRef.name,
        ...traceparentField(flowRunSpanTraceparent(run)),
      });
    }
  }

  /**
   * The agent steps the run's method runs took so far: the steps on the results of each method run's child
   * executions (an each's, one per item and step: found by their names), placed by the child's task.
   */
  private stepsOf(run: CachedFlowExecution, outputOf: (activation: string) => Json | undefined): FlowMethodStep[] {
    const namespace = run.metadata.namespace ?? "";
    const definition = flowDefinition.safeParse(run.status?.definition);
    if (!definition.success) return [];
    const children = new Set<string>();
    for (const e of this.o.executions.list(namespace)) {
      if (!isUndecodable(e) && e.metadata.labels?.[LABEL_FLOW_EXECUTION] === run.metadata.name) {
        children.add(e.metadata.name);
      }
    }
    const steps: FlowMethodStep[] = [];
    const collect = (activation: string, child: string, item: string) => {
      if (!children.has(child)) return;
      for (const r of this.o.results.byIndex(cacheKey(namespace, child))) {
        if (isUndecodable(r)) continue;
        const place = `${item}${r.spec.taskName}`;
        for (const step of r.spec.steps ?? []) {
          steps.push({ activation, place, attempt: r.spec.attempt, index: step.index, step: stepWireForm(step) });
        }
      }
    };
    for (const m of run.status?.methods ?? []) {
      const action = definition.data.methods[m.method]?.do;
      if (action?.call !== "each") {
        collect(m.id, methodExecutionName(run.metadata.name, m.id), "");
        continue;
      }
      // Items start in order: one numbered past the run's count of children follows items that skipped every step,
      // found once the each has ended (its output lists every item).
      const output = outputOf(m.id);
      const items = Math.max(children.size, Array.isArray(output) ? output.length : 0);
      for (let index = 0; index < items; index++) {
        for (const { name: step } of action.do) {
          collect(m.id, methodExecutionName(run.metadata.name, m.id, { index, step }), `${index}/${step}/`);
        }
      }
    }
    return steps;
  }

  /** Records a finished delivery on the run; records of one run are written one after another. */
  recordDelivery(delivery: WebhookDelivery, result: DeliveryResult): Promise<void> {
    const key = cacheKey(delivery.namespace, delivery.execution);
    const next = (this.records.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const run = this.o.runs.get(delivery.namespace, delivery.execution);
        if (!run) return;
        const records = { ...deliveryRecords(run), [delivery.hook]: result };
        const updated = await this.o.client.mergePatch<KubeObject>(
          resourcePath(FLOW_EXECUTIONS, delivery.namespace, delivery.execution),
          { metadata: { annotations: { [WEBHOOKS_ANNOTATION]: JSON.stringify(records) } } },
        );
        this.o.runs.upsert(updated);
      })
      .finally(() => {
        if (this.records.get(key) === next) this.records.delete(key);
      });
    this.records.set(key, next);
    return next;
  }
}

/** The run's span (under the kickoff's, flow-run-trace.ts): each delivery attempt is a span under it. */

/** A FlowExecution as the hooks read it: its methods, each method's latest output, the final output. */
function forWebhooks(
  run: CachedFlowExecution,
  outputOf: (activation: string) => Json | undefined,
  steps: FlowMethodStep[] | undefined,
): FlowRunForWebhooks {
  const status = run.status ?? {};
  const outputs: Record<string, Json> = {};
  for (const m of status.methods ?? []) {
    const output = outputOf(m.id);
    if (output !== undefined) outputs[m.method] = output;
  }
  const last = (status.graph as unknown as FlowRunState | undefined)?.completed.at(-1);
  return {
    id: run.metadata.name,
    flow: run.spec.flowRef.name,
    phase: status.phase ?? "Pending",
    methods: status.methods ?? [],
    ...(last !== undefined && outputs[last] !== undefined ? { result: outputs[last] } : {}),
    outputs,
    ...(status.error ? { error: status.error } : {}),
    executionTime: status.executionTime ?? 0,
    ...(run.spec.meta ? { meta: run.spec.meta } : {}),
    ...(run.spec.webhooks ? { webhooks: run.spec.webhooks } : {}),
    ...(steps ? { steps } : {}),
  };
}

/** The deliveries recorded on the run, by hook; a hand-edited annotation counts as none. */
function deliveryRecords(run: CachedFlowExecution | Undecodable): Record<string, string> {
  try {
    const records: unknown = JSON.parse(run.metadata?.annotations?.[WEBHOOKS_ANNOTATION] ?? "{}");
    return records && typeof records === "object" && !Array.isArray(records) ? (records as Record<string, string>) : {};
  } catch {
    return {};
  }
}

const delivered = (run: CachedFlowExecution) => new Set(Object.keys(deliveryRecords(run)));
