import type { CrewWebhookSigning } from "../core/crew.ts";
import type { Logger } from "../core/logger.ts";
import { newWebhookSigningSecret } from "../core/webhook-signature.ts";
import { isNotFound, type KubeApi, type KubeObject, type OwnerReference } from "../kube/runtime/client.ts";
import { CREWS, LABEL_CREW, LABEL_MANAGED_BY, MANAGED_BY, resourcePath, SECRETS } from "../kube/resources.ts";
import { createIfAbsent, deleteIfPresent } from "../kube/apply.ts";
import { signingSecretName, WEBHOOK_SECRET_ANNOTATION } from "./webhook-secrets.ts";

export interface CrewSigningSecretsOptions {
  client: Pick<KubeApi, "get" | "create" | "delete">;
  /** The key in the Secret's data that holds the signing key (KUBECREW_WEBHOOK_SECRET_KEY). */
  secretKey: string;
  log: Logger;
  /** Whose webhooks the Secrets sign: Crews' (the default), or Flows' (controller/flow-webhooks.ts). */
  owner?: SigningOwner;
}

/** The kind a generated Secret belongs to, the label naming its owner, and the Secret's name for an owner. */
export interface SigningOwner {
  type: { apiVersion: string; kind: string };
  label: string;
  secretName: (name: string, annotations: Record<string, string> | undefined) => string;
}

const CREW_OWNER: SigningOwner = { type: CREWS, label: LABEL_CREW, secretName: signingSecretName };

/**
 * Every crew's webhooks are signed: a crew whose annotation names no Secret of its own and that has no `<crew>-webhook`
 * of its owner's gets one generated here — a random key in `<crew>-webhook`, owned by the Crew (the garbage collector
 * deletes it with the Crew), created once per crew by the crew reconciler, never per execution. Its value is never
 * logged nor put in events or status; the status names the Secret only. Its owner reads it with kubectl.
 */
export class CrewSigningSecrets {
  private readonly o: CrewSigningSecretsOptions;
  private readonly owner: SigningOwner;

  constructor(options: CrewSigningSecretsOptions) {
    this.o = options;
    this.owner = options.owner ?? CREW_OWNER;
  }

  /** Which Secret signs the crew's webhooks, creating it first when the crew has none. */
  async ensure(crew: KubeObject): Promise<CrewWebhookSigning> {
    const { name = "", namespace = "", uid = "", annotations } = crew.metadata ?? {};
    const secretName = this.owner.secretName(name, annotations);
    const secretRef = { name: secretName, key: this.o.secretKey };
    // A Secret the crew names is its owner's to create: it is only read, when a delivery is signed.
    if (annotations?.[WEBHOOK_SECRET_ANNOTATION]) return { secretRef, generated: false };
    const path = resourcePath(SECRETS, namespace, secretName);
    let existing = await this.read(path);
    const owner = existing && generatedOwner(existing, this.owner.type);
    if (existing && owner && owner.uid !== uid) {
      // Generated for an earlier Crew of this name, which is gone: the garbage collector would take it from this one.
      await deleteIfPresent(this.o.client, path, { uid: existing.metadata?.uid ?? "" });
      existing = undefined;
    }
    if (!existing) {
      const created = await createIfAbsent(
        this.o.client,
        resourcePath(SECRETS, namespace),
        this.body(crew, secretName),
      );
      if (created) {
        this.o.log.info(
          { namespace, [this.owner.type.kind.toLowerCase()]: name, secret: secretName },
          "Webhook signing Secret generated",
        );
        return { secretRef, generated: true };
      }
      // Created meanwhile (by its owner, or by another controller): look at what is there.
      existing = await this.read(path);
    }
    return { secretRef, generated: existing !== undefined && generatedOwner(existing, this.owner.type)?.uid === uid };
  }

  private async read(path: string): Promise<KubeObject | undefined> {
    try {
      return await this.o.client.get<KubeObject>(path);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private body(crew: KubeObject, secretName: string): KubeObject & { type: string; data: Record<string, string> } {
    const { name = "", namespace = "", uid = "" } = crew.metadata ?? {};
    // No blockOwnerDeletion: it would need update on crews/finalizers, and nothing waits for this Secret to go.
    const { apiVersion, kind } = this.owner.type;
    const owner: OwnerReference = { apiVersion, kind, name, uid, controller: true };
    return {
      apiVersion: SECRETS.apiVersion,
      kind: SECRETS.kind,
      metadata: {
        name: secretName,
        namespace,
        labels: { [this.owner.label]: name, [LABEL_MANAGED_BY]: MANAGED_BY },
        ownerReferences: [owner],
      },
      type: "Opaque",
      data: { [this.o.secretKey]: Buffer.from(newWebhookSigningSecret()).toString("base64") },
    };
  }
}

/** The Crew (or Flow) a Secret was generated for (its controller owner of that kind), if it is a generated one. */
function generatedOwner(secret: KubeObject, type: SigningOwner["type"]): OwnerReference | undefined {
  return secret.metadata?.ownerReferences?.find(
    (o) => o.controller && o.kind === type.kind && o.apiVersion === type.apiVersion,
  );
}
