import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { V1Container, V1KeyToPath, V1Pod, V1Volume } from "@kubernetes/client-node";
import { ContainerConfigError, fieldValue, type ObjectSource } from "./env.ts";
import type { ContainerMount } from "./pod-namespace.ts";

/** What writing a pod's volumes needs from the node. */
export interface VolumeContext {
  pod: V1Pod;
  /** <pod dir>/volumes/<volume name> holds each volume's files. */
  volumesDir: string;
  source: ObjectSource;
  /** A TokenRequest for the pod's service account, bound to the pod. */
  token(audience: string | undefined, expirationSeconds: number): Promise<string>;
  /** The cluster CA, served for kube-root-ca.crt. */
  caPem: Buffer;
}

function writeAtomically(file: string, data: Buffer | string, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, data, { mode });
  renameSync(temporary, file);
}

function writeKeys(
  dir: string,
  kind: string,
  name: string,
  data: Record<string, Buffer> | undefined,
  items: V1KeyToPath[] | undefined,
  mode: number,
  optional: boolean | undefined,
): void {
  if (!data) {
    if (optional) return;
    throw new ContainerConfigError(`${kind} "${name}" not found`);
  }
  const entries: V1KeyToPath[] = items ?? Object.keys(data).map((key) => ({ key, path: key }));
  for (const item of entries) {
    const value = data[item.key];
    if (value === undefined) {
      if (optional) continue;
      throw new ContainerConfigError(`couldn't find key ${item.key} in ${kind} ${name}`);
    }
    writeAtomically(join(dir, item.path), value, item.mode ?? mode);
  }
}

async function writeVolume(ctx: VolumeContext, volume: V1Volume): Promise<void> {
  const dir = join(ctx.volumesDir, volume.name);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  if (volume.configMap) {
    const name = volume.configMap.name ?? "";
    const { items, optional, defaultMode = 0o644 } = volume.configMap;
    writeKeys(dir, "configmap", name, await ctx.source.configMap(name), items, defaultMode, optional);
  } else if (volume.secret) {
    const name = volume.secret.secretName ?? "";
    const { items, optional, defaultMode = 0o644 } = volume.secret;
    writeKeys(dir, "secret", name, await ctx.source.secret(name), items, defaultMode, optional);
  } else if (volume.projected) {
    const mode = volume.projected.defaultMode ?? 0o644;
    for (const source of volume.projected.sources ?? []) {
      if (source.serviceAccountToken) {
        const { audience, expirationSeconds = 3607, path } = source.serviceAccountToken;
        writeAtomically(join(dir, path), await ctx.token(audience, expirationSeconds), 0o600);
      } else if (source.configMap?.name === "kube-root-ca.crt") {
        writeAtomically(join(dir, "ca.crt"), ctx.caPem, mode);
      } else if (source.configMap) {
        const name = source.configMap.name ?? "";
        const data = await ctx.source.configMap(name);
        writeKeys(dir, "configmap", name, data, source.configMap.items, mode, source.configMap.optional);
      } else if (source.secret) {
        const name = source.secret.name ?? "";
        const data = await ctx.source.secret(name);
        writeKeys(dir, "secret", name, data, source.secret.items, mode, source.secret.optional);
      } else if (source.downwardAPI) {
        for (const item of source.downwardAPI.items ?? []) {
          if (item.fieldRef)
            writeAtomically(join(dir, item.path), fieldValue(ctx.pod, item.fieldRef), item.mode ?? mode);
        }
      }
    }
  } else if (volume.downwardAPI) {
    for (const item of volume.downwardAPI.items ?? []) {
      if (item.fieldRef) writeAtomically(join(dir, item.path), fieldValue(ctx.pod, item.fieldRef), item.mode ?? 0o644);
    }
  }
  // emptyDir and anything else: an empty directory.
}

/** Writes every volume of the pod under volumesDir (again on each call: projected tokens are refreshed this way). */
export async function writeVolumes(ctx: VolumeContext, only?: (volume: V1Volume) => boolean): Promise<void> {
  for (const volume of ctx.pod.spec?.volumes ?? []) {
    if (only && !only(volume)) continue;
    await writeVolume(ctx, volume);
  }
}

export function hasServiceAccountToken(volume: V1Volume): boolean {
  return (volume.projected?.sources ?? []).some((source) => source.serviceAccountToken);
}

/**
 * The container's volumeMounts as binds of the node's files: a volume's directory (or <volume>/<subPath>), a hostPath's
 * path. ConfigMap, Secret, projected and downward API volumes are read-only, as the kubelet mounts them.
 */
export function containerMounts(ctx: VolumeContext, container: V1Container): ContainerMount[] {
  const volumes = new Map((ctx.pod.spec?.volumes ?? []).map((v) => [v.name, v]));
  return (container.volumeMounts ?? []).flatMap((mount) => {
    const volume = volumes.get(mount.name);
    if (!volume) return [];
    const source = volume.hostPath
      ? join(volume.hostPath.path, mount.subPath ?? "")
      : join(ctx.volumesDir, mount.name, mount.subPath ?? "");
    const apiData = !!(volume.configMap || volume.secret || volume.projected || volume.downwardAPI);
    return [{ source, path: mount.mountPath, readOnly: apiData || mount.readOnly === true }];
  });
}
