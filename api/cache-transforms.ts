import type { Logger } from "../core/logger.ts";
import type { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import {
  ANNOTATION_IDEMPOTENCY_KEY,
  ANNOTATION_IDEMPOTENCY_REQUEST,
  ANNOTATION_TRACEPARENT,
} from "../kube/resources.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import {
  decodeCrew,
  decodeTaskResult,
  executionDecoder,
  type CachedCrew,
  type CachedExecution,
  type CachedTaskResult,
} from "../kube/typed-objects.ts";

/**
 * What the API's informer caches keep of each object (the informers' `transform`): the metadata the API reads and the
 * spec and status, without managedFields, ownerReferences, finalizers or kubectl's last-applied copy of the object,
 * decoded once into their types (kube/typed-objects.ts). A cluster's worth of finished executions is held in memory;
 * the fields the API never reads would be most of it.
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

/**
 * A Crew: everything but the metadata the API does not read (kubectl's last-applied copy is a second crew), decoded;
 * one that does not decode is logged once (per version: the cache decodes each once) and answered as no crew.
 */
export function crewForCache(log?: Logger): (crew: KubeObject) => CachedCrew | Undecodable {
  return (crew) => {
    const decoded = decodeCrew({ ...crew, metadata: metadataKept(crew, (name) => name !== LAST_APPLIED) });
    if (isUndecodable(decoded))
      log?.warn({ crew: decoded.metadata.name, problems: decoded.undecodable }, "Crew is invalid");
    return decoded;
  };
}

/** A CrewTaskResult: the spec (outputs and steps) and the metadata the API reads, decoded. */
export function resultForCache(result: KubeObject): CachedTaskResult | Undecodable {
  return decodeTaskResult({ metadata: metadataKept(result, () => false), spec: result.spec });
}

/**
 * A CrewExecution: spec, status (its crew snapshot decoded once and shared) and the metadata the API reads
 * (idempotency included), decoded.
 */
export function executionForCache(
  snapshots: CrewSpecSnapshots,
): (execution: KubeObject) => CachedExecution | Undecodable {
  const decode = executionDecoder(snapshots);
  return (execution) =>
    decode({
      metadata: metadataKept(
        execution,
        (name) =>
          name === ANNOTATION_IDEMPOTENCY_KEY ||
          name === ANNOTATION_IDEMPOTENCY_REQUEST ||
          name === ANNOTATION_TRACEPARENT,
      ),
      spec: execution.spec,
      ...(execution.status !== undefined ? { status: execution.status } : {}),
    });
}
