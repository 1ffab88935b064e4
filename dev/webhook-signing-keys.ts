import { newWebhookSigningSecret } from "../core/webhook-signature.ts";

/**
 * The embedded default's webhook signing secrets: one per crew, generated the first time the crew needs it and kept
 * for the life of the process (`kubecrew dev` keeps its executions in memory too; a restart draws new ones). The crew's
 * owner reads it with an org token at `GET /crews/{crew}/webhook-signing`.
 */
export class WebhookSigningKeys {
  private readonly keys = new Map<string, string>();

  secretFor(crew: string): string {
    let key = this.keys.get(crew);
    if (!key) {
      key = newWebhookSigningSecret();
      this.keys.set(crew, key);
    }
    return key;
  }
}
