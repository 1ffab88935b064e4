import type { CrewStatus } from "../core/crew.ts";
import { desiredCrewStatus } from "../core/crew-status.ts";
import type { KubeApi, KubeObject } from "../kube/runtime/client.ts";
import { type Informer, splitKey } from "../kube/runtime/informer.ts";
import { CREWS } from "../kube/resources.ts";
import { applyStatus } from "../kube/apply.ts";
import type { CrewSigningSecrets } from "./crew-signing-secret.ts";
import type { ReconcileResult } from "../kube/runtime/worker.ts";

export interface CrewReconcilerOptions {
  client: Pick<KubeApi, "mergePatch">;
  crews: Informer<KubeObject>;
  /** The Secret that signs the crew's webhooks, generated when the crew has none. */
  signingSecrets: CrewSigningSecrets;
  now: () => Date;
}

/**
 * One reconcile of one Crew, in the shape of the execution reconciler: observe it from the cache, make sure a Secret
 * signs its webhooks (one read, and one create the first time), decide its status (desiredCrewStatus: Ready, the
 * inputs it needs, its task count, its signing Secret's name), apply the status when it differs.
 */
export class CrewReconciler {
  private readonly o: CrewReconcilerOptions;

  constructor(options: CrewReconcilerOptions) {
    this.o = options;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const raw = this.o.crews.get(namespace, name);
    if (!raw || raw.metadata?.deletionTimestamp) return {};
    const previous = raw.status as CrewStatus | undefined;
    const crew = { spec: raw.spec, generation: raw.metadata?.generation };
    const signing = await this.o.signingSecrets.ensure(raw);
    const desired = desiredCrewStatus(crew, previous, this.o.now().toISOString(), signing);
    await applyStatus(this.o.client, this.o.crews, CREWS, raw, desired);
    return {};
  }
}
