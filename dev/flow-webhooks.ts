import { dueFlowWebhooks, type FlowRunForWebhooks, type FlowWebhookUrls } from "../core/flow-webhooks.ts";
import type { Json, JsonObject } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
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
}

/**
 * `kubecrew dev`'s flow webhooks: on each change of a run, the hooks dueFlowWebhooks() finds are sent once, signed as
 * a crew's are with a key generated per flow (GET /flows/{flow}/webhook-signing), with the same tries as a crew's.
 */
export class FlowRunWebhooks {
  private readonly keys = new WebhookSigningKeys();
  private readonly o: { log: Logger; fetch: typeof fetch; now: () => Date };

  constructor(options: { log: Logger; fetch: typeof fetch; now: () => Date }) {
    this.o = options;
  }

  secretFor(flow: string): string {
    return this.keys.secretFor(flow);
  }

  deliverDue(run: FlowRunForWebhooks & FlowRunHooks): void {
    const due = dueFlowWebhooks(run, (activation) => run.activationOutputs.get(activation), run.hooksSent);
    for (const action of due) {
      run.hooksSent.add(action.hook);
      const identity = { delivery: `${run.id}/${action.hook}`, event: action.kind };
      const log = this.o.log.child({ flow: run.flow, execution: run.id, hook: action.hook });
      void deliverWebhook(action.url, action.payload, { ...this.o, log }, this.secretFor(run.flow), identity);
    }
  }
}
