import { crewStatus, type CrewStatus } from "../core/crew.ts";
import { desiredCrewStatus, type DecodedCrewSpec } from "../core/crew-status.ts";
import { applyStatus } from "../kube/apply.ts";
import { CREWS } from "../kube/resources.ts";
import type { KubeApi } from "../kube/runtime/client.ts";
import type { EventRecorder } from "../kube/runtime/events.ts";
import { type Informer, splitKey } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { ReconcileResult } from "../kube/runtime/worker.ts";
import type { CachedCrew } from "../kube/typed-objects.ts";
import type { CrewSigningSecrets } from "./crew-signing-secret.ts";

export interface CrewReconcilerOptions {
  client: Pick<KubeApi, "mergePatch">;
  crews: Informer<CachedCrew | Undecodable>;
  /** The Secret that signs the crew's webhooks, generated when the crew has none. */
  signingSecrets: CrewSigningSecrets;
  /** Where an invalid crew is reported: a Warning Event on the Crew, once, with its Ready condition. */
  events: Pick<EventRecorder, "record">;
  now: () => Date;
}

/**
 * One reconcile of one Crew, in the shape of the execution reconciler: observe it from the cache (decoded there, or
 * kept with what is wrong with it), make sure a Secret signs its webhooks (one read, and one create the first time),
 * decide its status (desiredCrewStatus: Ready, the inputs it needs, its task count, its signing Secret's name), apply
 * the status when it differs. A crew that does not decode is Ready False (InvalidSpec) naming its problems, and a
 * Warning Event says the same when that condition is new.
 */
export class CrewReconciler {
  private readonly o: CrewReconcilerOptions;

  constructor(options: CrewReconcilerOptions) {
    this.o = options;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const crew = this.o.crews.get(namespace, name);
    if (!crew || crew.metadata.deletionTimestamp) return {};
    const invalid = isUndecodable(crew);
    const decoded: DecodedCrewSpec = invalid ? { problems: [...crew.undecodable] } : { spec: crew.spec };
    // An invalid crew's status is kept as it came: read here, on this rare path only.
    const previous: CrewStatus | undefined = invalid ? crewStatus.safeParse(crew.status).data : crew.status;
    const signing = await this.o.signingSecrets.ensure(crew);
    const generation = crew.metadata.generation;
    const desired = desiredCrewStatus(
      { ...decoded, ...(generation !== undefined ? { generation } : {}) },
      previous,
      this.o.now().toISOString(),
      signing,
    );
    await applyStatus(this.o.client, this.o.crews, CREWS, crew, desired);
    const ready = desired.conditions?.find((c) => c.type === "Ready");
    if (
      invalid &&
      ready &&
      !sameVerdict(
        ready,
        previous?.conditions?.find((c) => c.type === "Ready"),
      )
    ) {
      const target = { name, namespace, uid: crew.metadata.uid ?? "", apiVersion: CREWS.apiVersion, kind: CREWS.kind };
      this.o.events.record(target, "Warning", ready.reason, ready.message);
    }
    return {};
  }
}

type Verdict = { status: string; reason: string; message: string };
const sameVerdict = (a: Verdict, b: Verdict | undefined) =>
  !!b && a.status === b.status && a.reason === b.reason && a.message === b.message;
