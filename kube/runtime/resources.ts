/** API paths of Kubernetes resources: a resource type, and the built-in kinds a controller touches. */

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  kind: string;
  apiVersion: string;
}

export function resourceType(group: string, version: string, plural: string, kind: string): ResourceType {
  return { group, version, plural, kind, apiVersion: group ? `${group}/${version}` : version };
}

export const JOBS = resourceType("batch", "v1", "jobs", "Job");
export const PODS = resourceType("", "v1", "pods", "Pod");
export const CONFIG_MAPS = resourceType("", "v1", "configmaps", "ConfigMap");
export const SECRETS = resourceType("", "v1", "secrets", "Secret");
export const EVENTS = resourceType("", "v1", "events", "Event");
export const LEASES = resourceType("coordination.k8s.io", "v1", "leases", "Lease");

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
