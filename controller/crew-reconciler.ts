import type { CrewStatus } from "../core/crew.ts";
import { desiredCrewStatus } from "../core/crew-status.ts";
import type { KubeApi, KubeObject } from "../kube/client.ts";
import { type Informer, splitKey } from "../kube/informer.ts";
import { CREWS } from "../kube/resources.ts";
import { applyStatus } from "./apply.ts";
import type { ReconcileResult } from "./worker.ts";

export interface CrewReconcilerOptions {
  client: Pick<KubeApi, "mergePatch">;
  crews: Informer<KubeObject>;
  now: () => Date;
}

/**
 * One reconcile of one Crew, in the shape of the execution reconciler: observe it from the cache, decide its status
 * (desiredCrewStatus: Ready, the inputs it needs, its task count), apply the status when it differs.
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
    const desired = desiredCrewStatus(crew, previous, this.o.now().toISOString());
    await applyStatus(this.o.client, this.o.crews, CREWS, raw, desired);
    return {};
  }
}
