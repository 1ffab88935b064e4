import { isNotFound, type KubeApi, type KubeObject } from "../kube/client.ts";
import type { Informer } from "../kube/informer.ts";
import { resourcePath, SECRETS } from "../kube/resources.ts";

/** Crew annotation naming the Secret that holds the crew's webhook signing key (default `<crew>-webhook`). */
export const WEBHOOK_SECRET_ANNOTATION = "kubecrew.io/webhook-secret";

export interface WebhookSecretsOptions {
  client: Pick<KubeApi, "get">;
  crews: Informer<KubeObject>;
  /** The key in the Secret's data that holds the signing key. */
  secretKey: string;
  /** Used when the crew has no Secret (or no such key in it); undefined sends unsigned. */
  defaultSigningKey?: string | undefined;
  /** How long a read Secret (or its absence) is trusted. */
  ttlMs?: number;
}

/** The signing key of each crew's webhooks, read from its Secret and kept for a while (a delivery burst reads once). */
export class WebhookSecrets {
  private readonly o: WebhookSecretsOptions;
  private readonly cache = new Map<string, { value: string | undefined; at: number }>();

  constructor(options: WebhookSecretsOptions) {
    this.o = options;
  }

  async secretFor(namespace: string, crew: string): Promise<string | undefined> {
    const annotations = this.o.crews.get(namespace, crew)?.metadata?.annotations;
    const secretName = annotations?.[WEBHOOK_SECRET_ANNOTATION] ?? `${crew}-webhook`;
    const cacheKey = `${namespace}/${secretName}`;
    const cached = this.cache.get(cacheKey);
    if (cached && Date.now() - cached.at < (this.o.ttlMs ?? 30_000)) return cached.value ?? this.o.defaultSigningKey;
    let value: string | undefined;
    try {
      const secret = await this.o.client.get<{ data?: Record<string, string> }>(
        resourcePath(SECRETS, namespace, secretName),
      );
      const encoded = secret.data?.[this.o.secretKey];
      value = encoded ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.cache.set(cacheKey, { value, at: Date.now() });
    return value ?? this.o.defaultSigningKey;
  }
}
