import { isNotFound, type KubeApi, type KubeObject } from "../kube/runtime/client.ts";
import type { Informer } from "../kube/runtime/informer.ts";
import { resourcePath, SECRETS } from "../kube/resources.ts";
import { KubecrewError } from "../core/errors.ts";

/** Crew annotation naming the Secret that holds the crew's webhook signing key (default `<crew>-webhook`). */
export const WEBHOOK_SECRET_ANNOTATION = "kubecrew.io/webhook-secret";

/**
 * The Secret whose key signs a crew's webhooks: the one its annotation names, else `<crew>-webhook` — the crew's own
 * when its owner created it, otherwise the one the crew reconciler generates (crew-signing-secret.ts).
 */
export function signingSecretName(crew: string, annotations: Record<string, string> | undefined): string {
  return annotations?.[WEBHOOK_SECRET_ANNOTATION] ?? `${crew}-webhook`;
}

/** The crew's signing Secret (or its key) is not there: nothing may be sent unsigned, so the attempt fails. */
export class MissingSigningSecretError extends KubecrewError {
  readonly code = "missing_signing_secret";
  override name = "MissingSigningSecretError";
}

export interface WebhookSecretsOptions {
  client: Pick<KubeApi, "get">;
  /** The Crews (or the Flows: their annotations name a Secret of their own). */
  crews: Pick<Informer<KubeObject>, "get">;
  /** The Secret's name for an owner (default signingSecretName: a crew's). */
  secretName?: (name: string, annotations: Record<string, string> | undefined) => string;
  /** What the owner is called in a refusal's message. */
  ownerWord?: string;
  /** The key in the Secret's data that holds the signing key. */
  secretKey: string;
  /** How long a read Secret is trusted. */
  ttlMs?: number;
}

/**
 * The signing key of each crew's webhooks, read from its Secret and kept for a while (a delivery burst reads once).
 * A missing Secret is not kept: the delivery's next attempt reads again, and finds the one the crew reconciler made.
 */
export class WebhookSecrets {
  private readonly o: WebhookSecretsOptions;
  private readonly cache = new Map<string, { value: string; at: number }>();

  constructor(options: WebhookSecretsOptions) {
    this.o = options;
  }

  async secretFor(namespace: string, crew: string): Promise<string> {
    const nameOf = this.o.secretName ?? signingSecretName;
    const secretName = nameOf(crew, this.o.crews.get(namespace, crew)?.metadata?.annotations);
    const owner = this.o.ownerWord ?? "crew";
    const cacheKey = `${namespace}/${secretName}`;
    const cached = this.cache.get(cacheKey);
    if (cached && Date.now() - cached.at < (this.o.ttlMs ?? 30_000)) return cached.value;
    let encoded: string | undefined;
    try {
      const secret = await this.o.client.get<{ data?: Record<string, string> }>(
        resourcePath(SECRETS, namespace, secretName),
      );
      encoded = secret.data?.[this.o.secretKey];
    } catch (err) {
      if (!isNotFound(err)) throw err;
      throw new MissingSigningSecretError(
        `the ${owner}'s webhook signing Secret ${namespace}/${secretName} is missing`,
      );
    }
    if (!encoded) {
      throw new MissingSigningSecretError(
        `the ${owner}'s webhook signing Secret ${namespace}/${secretName} has no key "${this.o.secretKey}"`,
      );
    }
    const value = Buffer.from(encoded, "base64").toString("utf8");
    this.cache.set(cacheKey, { value, at: Date.now() });
    return value;
  }
}
