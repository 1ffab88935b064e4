import { isNotFound, type KubeApi } from "../kube/runtime/client.ts";
import { resourcePath, SECRETS } from "../kube/resources.ts";
import { KubecrewError } from "../core/errors.ts";

/** Where an execution's human-input webhook credentials are: spec.humanInputWebhook.authentication.secretRef. */
export interface CredentialsRef {
  name: string;
  key: string;
}

/** The credentials' Secret is not there (yet): nothing goes out without them, so the attempt fails and is retried. */
export class MissingCredentialsError extends KubecrewError {
  readonly code = "missing_credentials";
  override name = "MissingCredentialsError";
}

/**
 * The Authorization header of each execution's human-input webhook, read from the Secret the API created at kickoff
 * (kube/human-input-secret.ts) by name — never listed or watched — and kept for a while, as the signing keys are.
 */
export class HumanInputCredentials {
  private readonly cache = new Map<string, { value: string; at: number }>();
  private readonly client: Pick<KubeApi, "get">;
  private readonly ttlMs: number;

  constructor(client: Pick<KubeApi, "get">, ttlMs = 30_000) {
    this.client = client;
    this.ttlMs = ttlMs;
  }

  async authorizationFor(namespace: string, ref: CredentialsRef): Promise<string> {
    const cacheKey = `${namespace}/${ref.name}/${ref.key}`;
    const cached = this.cache.get(cacheKey);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.value;
    let encoded: string | undefined;
    try {
      const secret = await this.client.get<{ data?: Record<string, string> }>(
        resourcePath(SECRETS, namespace, ref.name),
      );
      encoded = secret.data?.[ref.key];
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!encoded) {
      throw new MissingCredentialsError(
        `the human-input webhook's Secret ${namespace}/${ref.name} has no "${ref.key}"`,
      );
    }
    const value = Buffer.from(encoded, "base64").toString("utf8");
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(cacheKey, { value, at: Date.now() });
    return value;
  }
}
