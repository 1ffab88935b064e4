import type { KubeObject } from "../kube/runtime/client.ts";
import type { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { ANNOTATION_IDEMPOTENCY_KEY, ANNOTATION_IDEMPOTENCY_REQUEST } from "../kube/resources.ts";

/**
 * What the API's informer caches keep of each object (the informers' `transform`): the metadata the API reads and the
 * spec and status, without managedFields, ownerReferences, finalizers or kubectl's last-applied copy of the object.
 * A cluster's worth of finished executions is held in memory; the fields the API never reads would be most of it.
 */

/** The metadata fields the API's schemas read (core/crew.ts objectMeta). */
function metadataKept(object: KubeObject, keepAnnotations: (name: string) => boolean): KubeObject["metadata"] {
  const m = object.metadata ?? {};
  const annotations = Object.entries(m.annotations ?? {}).filter(([name]) => keepAnnotations(name));
  return {
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.generation !== undefined ? { generation: m.generation } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(m.labels ? { labels: m.labels } : {}),
    ...(annotations.length ? { annotations: Object.fromEntries(annotations) } : {}),
  };
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** A Crew: everything but the metadata the API does not read (kubectl's last-applied copy is a second crew). */
export function crewForCache(crew: KubeObject): KubeObject {
  return { ...crew, metadata: metadataKept(crew, (name) => name !== LAST_APPLIED) };
}

/** A CrewTaskResult: the spec (outputs and steps) and the metadata the API reads. */
export function resultForCache(result: KubeObject): KubeObject {
  return {
    ...(result.apiVersion ? { apiVersion: result.apiVersion } : {}),
    ...(result.kind ? { kind: result.kind } : {}),
    metadata: metadataKept(result, () => false),
    spec: result.spec,
  };
}

/** A CrewExecution: spec, status (its crew snapshot shared) and the metadata the API reads (idempotency included). */
export function executionForCache(snapshots: CrewSpecSnapshots): (execution: KubeObject) => KubeObject {
  return (execution) => {
    const status = execution.status as { crewSpec?: unknown } | undefined;
    return {
      ...(execution.apiVersion ? { apiVersion: execution.apiVersion } : {}),
      ...(execution.kind ? { kind: execution.kind } : {}),
      metadata: metadataKept(
        execution,
        (name) => name === ANNOTATION_IDEMPOTENCY_KEY || name === ANNOTATION_IDEMPOTENCY_REQUEST,
      ),
      spec: execution.spec,
      ...(status
        ? {
            status: status.crewSpec === undefined ? status : { ...status, crewSpec: snapshots.shared(status.crewSpec) },
          }
        : {}),
    };
  };
}
