import type { V1Container, V1ObjectFieldSelector, V1Pod } from "@kubernetes/client-node";
import { KubecrewError } from "../../core/errors.ts";

/** Reads ConfigMaps (data and binaryData) and Secrets of the pod's namespace as bytes; undefined when absent. */
export interface ObjectSource {
  configMap(name: string): Promise<Record<string, Buffer> | undefined>;
  secret(name: string): Promise<Record<string, Buffer> | undefined>;
}

/** A reference the kubelet would wait for (CreateContainerConfigError) rather than start the container without. */
export class ContainerConfigError extends KubecrewError {
  readonly code = "container_config_error";
}

/** `$(NAME)` expands to an earlier variable, `$$(NAME)` is a literal `$(NAME)`, an unknown `$(NAME)` stays as written. */
export function expandVariables(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === "$$") return "$";
    return name !== undefined && name in env ? env[name]! : match;
  });
}

/** metadata.name, metadata.namespace, metadata.uid, metadata.labels['k'], metadata.annotations['k'], spec.* and status IPs. */
export function fieldValue(pod: V1Pod, selector: V1ObjectFieldSelector): string {
  const path = selector.fieldPath;
  const keyed = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (keyed) {
    const map = keyed[1] === "labels" ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[keyed[2]!] ?? "";
  }
  switch (path) {
    case "metadata.name":
      return pod.metadata?.name ?? "";
    case "metadata.namespace":
      return pod.metadata?.namespace ?? "";
    case "metadata.uid":
      return pod.metadata?.uid ?? "";
    case "spec.nodeName":
      return pod.spec?.nodeName ?? "";
    case "spec.serviceAccountName":
      return pod.spec?.serviceAccountName ?? "";
    case "status.podIP":
    case "status.hostIP":
      return "127.0.0.1";
    default:
      throw new ContainerConfigError(`the local node does not support fieldRef ${path}`);
  }
}

async function keyOf(
  kind: "ConfigMap" | "Secret",
  read: (name: string) => Promise<Record<string, Buffer> | undefined>,
  ref: { name?: string; key: string; optional?: boolean },
): Promise<string | undefined> {
  const data = await read(ref.name ?? "");
  const value = data?.[ref.key];
  if (value === undefined && !ref.optional) {
    throw new ContainerConfigError(
      data ? `couldn't find key ${ref.key} in ${kind} ${ref.name}` : `${kind.toLowerCase()} "${ref.name}" not found`,
    );
  }
  return value?.toString("utf8");
}

/** The container's environment from envFrom and env, in the kubelet's order, on top of `base`. */
export async function containerEnv(
  pod: V1Pod,
  container: V1Container,
  base: Record<string, string>,
  source: ObjectSource,
): Promise<Record<string, string>> {
  const env: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? "";
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? "ConfigMap" : "Secret";
    const data = await (from.configMapRef ? source.configMap(ref.name ?? "") : source.secret(ref.name ?? ""));
    if (!data && !ref.optional) throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
    for (const [key, value] of Object.entries(data ?? {})) env[prefix + key] = value.toString("utf8");
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    let value: string | undefined;
    if (!from) value = expandVariables(variable.value ?? "", env);
    else if (from.secretKeyRef) value = await keyOf("Secret", (n) => source.secret(n), from.secretKeyRef);
    else if (from.configMapKeyRef) value = await keyOf("ConfigMap", (n) => source.configMap(n), from.configMapKeyRef);
    else if (from.fieldRef) value = fieldValue(pod, from.fieldRef);
    else if (from.resourceFieldRef) value = "0"; // no resource accounting on the local node
    if (value !== undefined) env[variable.name] = value;
  }
  return env;
}
