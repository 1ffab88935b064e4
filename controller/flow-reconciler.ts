import { API_VERSION } from "../core/api-group.ts";
import type { Crew } from "../core/crew.ts";
import { crewSpec } from "../core/crew-resource.ts";
import { desiredFlowStatus, judgeFlowResource, type FlowVerdict } from "../core/flow/flow-verdict.ts";
import type { DeclaredCrew } from "../core/flow/declared-crews.ts";
import { flowStatus } from "../core/flow/flow-resources.ts";
import { applyStatus, createIfAbsent } from "../kube/apply.ts";
import { mergePatchDiff } from "../kube/merge-patch.ts";
import { CREWS, FLOWS, LABEL_FLOW, LABEL_MANAGED_BY, MANAGED_BY, resourcePath } from "../kube/resources.ts";
import type { KubeApi, KubeObject } from "../kube/runtime/client.ts";
import type { EventRecorder } from "../kube/runtime/events.ts";
import { type Informer, splitKey } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { ReconcileResult } from "../kube/runtime/worker.ts";
import type { CachedCrew } from "../kube/typed-objects.ts";
import type { CachedFlow } from "./flow-caches.ts";

export interface FlowReconcilerOptions {
  client: Pick<KubeApi, "mergePatch" | "create">;
  flows: Informer<CachedFlow | Undecodable>;
  crews: Informer<CachedCrew | Undecodable>;
  events: Pick<EventRecorder, "record">;
  now: () => Date;
  /** The Secret that signs the flow's webhooks, made when it has none (controller/flow-webhooks.ts). */
  signingSecrets?: { ensureSigningSecret(flow: KubeObject): Promise<void> };
}

/**
 * One reconcile of one Flow: judge its document (core/flow/flow-verdict.ts), keep the Crews its agent and crew methods
 * run (created when absent, patched when the Flow changed them; owned by the Flow, so they go with it), see that the
 * Crews its `from_declaration` methods name exist and are Ready (core/flow/declared-crews.ts), and write its status —
 * Ready False naming every problem (and a Warning Event when that verdict is new), else Ready True.
 */
export class FlowReconciler {
  private readonly o: FlowReconcilerOptions;

  constructor(options: FlowReconcilerOptions) {
    this.o = options;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const flow = this.o.flows.get(namespace, name);
    if (!flow || flow.metadata.deletionTimestamp) return {};
    await this.o.signingSecrets?.ensureSigningSecret(flow);
    let verdict: FlowVerdict = isUndecodable(flow)
      ? { ok: false as const, problems: [...flow.undecodable] }
      : judgeFlowResource(name, flow.spec, flow.metadata.annotations);
    if (verdict.ok) {
      const taken: string[] = [];
      for (const crew of verdict.crews) {
        if (!(await this.keepCrew(flow, crew))) taken.push(crew.metadata.name);
      }
      const problems = [
        ...taken.map((c) => `the Crew "${c}" its methods run exists and is not this Flow's; rename one`),
        ...this.missingDeclared(namespace, verdict.declared),
      ];
      if (problems.length) verdict = { ok: false, problems };
    }
    const previous = flowStatus.safeParse(flow.status).data;
    const desired = desiredFlowStatus(verdict, previous, flow.metadata.generation, this.o.now().toISOString());
    await applyStatus(this.o.client, this.o.flows, FLOWS, flow, desired);
    const ready = desired.conditions!.find((c) => c.type === "Ready")!;
    const before = previous?.conditions?.find((c) => c.type === "Ready");
    if (!verdict.ok && (before?.status !== "False" || before.message !== ready.message)) {
      const target = { name, namespace, uid: flow.metadata.uid ?? "", apiVersion: API_VERSION, kind: FLOWS.kind };
      this.o.events.record(target, "Warning", ready.reason, ready.message);
    }
    return {};
  }

  /** The crews its `from_declaration` methods name that the namespace lacks, or holds not Ready. */
  private missingDeclared(namespace: string, declared: DeclaredCrew[]): string[] {
    return declared.flatMap(({ at, path, crew }) => {
      const existing = crew ? this.o.crews.get(namespace, crew) : undefined;
      const where = `${at}.from_declaration: the Crew "${crew}" (${path})`;
      if (!existing) {
        return [
          `${where} does not exist in namespace ${namespace}; import it: kubecrew import crewai ${path} --name ${crew} | kubectl apply -f -`,
        ];
      }
      const ready = isUndecodable(existing) ? undefined : existing.status?.conditions?.find((c) => c.type === "Ready");
      if (isUndecodable(existing) || ready?.status === "False") {
        return [`${where} is not Ready${ready?.message ? `: ${ready.message}` : ""}`];
      }
      return [];
    });
  }

  /** False when a Crew of that name exists and is not the Flow's. */
  private async keepCrew(flow: CachedFlow | Undecodable, crew: Crew): Promise<boolean> {
    const { namespace = "", uid = "" } = flow.metadata;
    const crewName = crew.metadata.name;
    const existing = this.o.crews.get(namespace, crewName);
    if (!existing) {
      const created = await createIfAbsent(this.o.client, resourcePath(CREWS, namespace), {
        apiVersion: API_VERSION,
        kind: "Crew",
        metadata: {
          name: crewName,
          namespace,
          labels: { [LABEL_FLOW]: flow.metadata.name!, [LABEL_MANAGED_BY]: MANAGED_BY },
          ownerReferences: [
            { apiVersion: API_VERSION, kind: FLOWS.kind, name: flow.metadata.name!, uid, controller: true },
          ],
        },
        spec: crew.spec,
      });
      if (created) this.o.crews.upsert(created);
      return true;
    }
    if (existing.metadata.labels?.[LABEL_FLOW] !== flow.metadata.name) return false;
    if (isUndecodable(existing)) return true;
    // Compared as decoded (defaults filled in on both sides): only a real change is written.
    const patch = mergePatchDiff(existing.spec, crewSpec.parse(crew.spec));
    if (Object.keys(patch).length === 0) return true;
    const updated = await this.o.client.mergePatch<KubeObject>(resourcePath(CREWS, namespace, crewName), {
      spec: patch,
    });
    this.o.crews.upsert(updated);
    return true;
  }
}
