import {
  dueFlowWebhooks,
  type FlowMethodStep,
  type FlowRunForWebhooks,
  type FlowWebhookUrls,
} from "../core/flow-webhooks.ts";
import type { Json, JsonObject } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import { stepWireForm } from "../core/task-step.ts";
import { traceIdOf } from "../platform/telemetry/trace-context.ts";
import type { LocalExecutions } from "./local-executions.ts";
import { deliverWebhook } from "./webhook.ts";
import { WebhookSigningKeys } from "./webhook-signing-keys.ts";

/** What a run in memory keeps for its webhooks. */
export interface FlowRunHooks {
  /** The kickoff's webhook URLs and meta. */
  webhooks?: FlowWebhookUrls;
  meta?: JsonObject;
  /** Each method run's output, by `<method>#<n>` (outputs keeps only a method's latest). */
  activationOutputs: Map<string, Json>;
  /** The hooks already sent (dueFlowWebhooks asks for each until then). */
  hooksSent: Set<string>;
  /** Each child execution a method run started, by its id: the method run (`<method>#<n>`) its steps belong to. */
  childRuns: Map<string, string>;
  /** Step webhooks being sent: the next step of the same place waits until this one is done. */
  stepsSending: Set<string>;
  /** The run span's W3C traceparent (tracing on): each delivery attempt is a span under it. */
  traceparent?: string;
}

export interface FlowRunWebhooksOptions {
  log: Logger;
  fetch: typeof fetch;
  now: () => Date;
  /** The executions that run the methods: their steps are the method runs' steps. */
  executions: Pick<LocalExecutions, "specOf" | "heldExecution">;
}

/**
 * `kubecrew dev`'s flow webhooks: on each change of a run, the hooks dueFlowWebhooks() finds are sent once, signed as
 * a crew's are with a key generated per flow (GET /flows/{flow}/webhook-signing), with the same tries as a crew's. A
 * method run's steps are read from its child executions; a place's next step goes once the one before is done. Each
 * attempt is a span under the run's span whose `traceparent` the request carries, as the controller's (tracing on).
 */
export class FlowRunWebhooks {
  private readonly keys = new WebhookSigningKeys();
  private readonly o: FlowRunWebhooksOptions;

  constructor(options: FlowRunWebhooksOptions) {
    this.o = options;
  }

  secretFor(flow: string): string {
    return this.keys.secretFor(flow);
  }

  deliverDue(run: FlowRunForWebhooks & FlowRunHooks): void {
    const view = run.webhooks?.step ? { ...run, steps: this.stepsOf(run) } : run;
    const due = dueFlowWebhooks(view, (activation) => run.activationOutputs.get(activation), run.hooksSent);
    for (const action of due) {
      if (run.stepsSending.has(action.hook)) continue;
      const trace = { traceparent: run.traceparent, execution: run.id, hook: action.hook };
      const identity = { delivery: `${run.id}/${action.hook}`, event: action.kind, trace };
      const traceId = traceIdOf(run.traceparent);
      const named = { flow: run.flow, execution: run.id, hook: action.hook, ...(traceId ? { trace_id: traceId } : {}) };
      const log = this.o.log.child(named);
      const deps = { fetch: this.o.fetch, now: this.o.now, log };
      const sent = deliverWebhook(action.url, action.payload, deps, this.secretFor(run.flow), identity);
      if (action.kind !== "step") {
        run.hooksSent.add(action.hook);
        continue;
      }
      run.stepsSending.add(action.hook);
      void sent.finally(() => {
        run.stepsSending.delete(action.hook);
        run.hooksSent.add(action.hook);
        this.deliverDue(run);
      });
    }
  }

  /** The steps the run's child executions took so far, each placed by its child and task. */
  private stepsOf(run: FlowRunHooks): FlowMethodStep[] {
    const steps: FlowMethodStep[] = [];
    for (const [id, activation] of run.childRuns) {
      const crew = this.o.executions.specOf(id)?.crewRef.name;
      const child = crew ? this.o.executions.heldExecution(crew, id) : undefined;
      for (const [task, results] of Object.entries(child?.results ?? {})) {
        for (const r of results) {
          for (const step of r.steps ?? []) {
            steps.push({
              activation,
              place: `${id}/${task}`,
              attempt: r.attempt,
              index: step.index,
              step: stepWireForm(step),
            });
          }
        }
      }
    }
    return steps;
  }
}
