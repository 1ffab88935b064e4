import { API_GROUP, CRD_VERSION } from "../core/api-group.ts";

/** API paths of the resources kubecrew touches, namespaced or across all namespaces. */

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  apiVersion: string;
}

function resource(group: string, version: string, plural: string, kind: string): ResourceType {
  return { group, version, plural, kind, apiVersion: group ? `${group}/${version}` : version };
}

export const CREWS = resource(API_GROUP, CRD_VERSION, "crews", "Crew");
export const CREW_EXECUTIONS = resource(API_GROUP, CRD_VERSION, "crewexecutions", "CrewExecution");
export const CREW_TASK_RESULTS = resource(API_GROUP, CRD_VERSION, "crewtaskresults", "CrewTaskResult");
export const JOBS = resource("batch", "v1", "jobs", "Job");
export const PODS = resource("", "v1", "pods", "Pod");
export const CONFIG_MAPS = resource("", "v1", "configmaps", "ConfigMap");
export const SECRETS = resource("", "v1", "secrets", "Secret");
export const EVENTS = resource("", "v1", "events", "Event");
export const LEASES = resource("coordination.k8s.io", "v1", "leases", "Lease");

/** `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>][/<sub>]`; namespace undefined means all namespaces. */
export function resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const root = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  let path = namespace
    ? `${root}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`
    : `${root}/${type.plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (name && subresource) path += `/${subresource}`;
  return path;
}

/** Labels on every child of an execution: selectors for the informers and for cleanup. */
export const LABEL_EXECUTION = "kubecrew.io/execution";
export const LABEL_TASK = "kubecrew.io/task";
export const LABEL_TASK_INDEX = "kubecrew.io/task-index";
export const LABEL_CREW = "kubecrew.io/crew";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "kubecrew";

/**
 * A kickoff's Idempotency-Key on its CrewExecution (never the key itself): the label holds the scoped key's hash
 * (cut to a label value's 63 characters) for `kubectl get ce -l`; the annotations hold the full hashes of the key and
 * of the request body, which the API compares on a retry.
 */
export const LABEL_IDEMPOTENCY_KEY = "kubecrew.io/idempotency-key";
export const ANNOTATION_IDEMPOTENCY_KEY = "kubecrew.io/idempotency-key-sha256";
export const ANNOTATION_IDEMPOTENCY_REQUEST = "kubecrew.io/idempotency-request-sha256";
