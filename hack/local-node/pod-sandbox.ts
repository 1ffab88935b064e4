import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import { containerEnv } from "./env.ts";
import { localImageEnv } from "./local-images.ts";
import type { NodeContext } from "./node-context.ts";
import { apiObjectSource } from "./object-source.ts";
import type { ContainerMount } from "./pod-namespace.ts";
import { requestPodToken, serviceAccountKubeconfig } from "./service-account.ts";
import { containerMounts, hasServiceAccountToken, writeVolumes, type VolumeContext } from "./volumes.ts";

const TOKEN_SECONDS = 3600;
/** The kubelet refreshes projected tokens at 80% of their life. */
export const TOKEN_REFRESH_MS = TOKEN_SECONDS * 800;

/**
 * What a pod's containers share on the node, made before any of them starts: the pod's directory (home, logs,
 * volumes, termination logs), its service-account kubeconfig, and each container's environment and mounts.
 */
export class PodSandbox {
  readonly dir: string;
  /** HOME of the pod's processes (TMPDIR is in it). */
  readonly home: string;
  private readonly ctx: NodeContext;
  /** The pod's latest state (the runtime's). */
  private readonly pod: () => V1Pod;

  constructor(ctx: NodeContext, pod: () => V1Pod) {
    this.ctx = ctx;
    this.pod = pod;
    const { namespace, name, uid } = pod().metadata!;
    this.dir = join(ctx.podsDir, `${namespace}_${name}_${uid}`);
    this.home = join(this.dir, "home");
  }

  /** Log file of a container; `kubectl logs` reads it through the node's kubelet API. */
  logFile(container: string): string {
    return join(this.dir, "logs", `${container}.log`);
  }

  /** The file the container writes its termination message to, bound at its terminationMessagePath. */
  terminationLog(container: string): string {
    return join(this.dir, "termination", container);
  }

  /** An empty directory where the container's mount namespace makes its root (pod-namespace.ts). */
  namespaceDir(container: string): string {
    return join(this.dir, "namespaces", container);
  }

  /** What the container sees at its own paths: its volumeMounts and its termination log. */
  mounts(container: V1Container): ContainerMount[] {
    return [
      ...containerMounts(this.volumeContext(), container),
      {
        source: this.terminationLog(container.name),
        path: container.terminationMessagePath ?? "/dev/termination-log",
        readOnly: false,
      },
    ];
  }

  /**
   * The node's paths a container's process needs, wherever its mounts are: this checkout, the node's state (the
   * `kubecrew` shim, this pod's directory), the crewai runtime's Python, the sources its image declares.
   */
  nodePaths(env: Record<string, string>): string[] {
    const python = this.ctx.crewaiPython ? [dirname(dirname(this.ctx.crewaiPython))] : [];
    const declared = (env.PYTHONPATH ?? "").split(":").filter((path) => isAbsolute(path) && existsSync(path));
    return [this.ctx.repoRoot, this.ctx.stateDir, ...python, ...declared];
  }

  /** Whether the pod holds service-account tokens, which expire: refreshTokens() is due every TOKEN_REFRESH_MS. */
  holdsTokens(): boolean {
    return this.automountsToken() || (this.pod().spec?.volumes ?? []).some(hasServiceAccountToken);
  }

  /**
   * Everything a container needs before it can start; answers each container's environment by name. A missing Secret
   * or ConfigMap throws (ContainerConfigError): the runtime retries on the next sync.
   */
  async prepare(): Promise<Map<string, Record<string, string>>> {
    const pod = this.pod();
    mkdirSync(join(this.dir, "logs"), { recursive: true });
    mkdirSync(join(this.home, "tmp"), { recursive: true });
    mkdirSync(join(this.dir, "termination"), { recursive: true });
    if (this.automountsToken()) await this.writeServiceAccountKubeconfig();
    const volumes = this.volumeContext();
    await writeVolumes(volumes);
    const envs = new Map<string, Record<string, string>>();
    const source = apiObjectSource(this.ctx.core, pod.metadata!.namespace!);
    for (const container of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      const base = { ...this.baseEnv(), ...localImageEnv(this.ctx.stateDir, container.image) };
      envs.set(container.name, await containerEnv(this.pod(), container, base, source));
      mkdirSync(this.namespaceDir(container.name), { recursive: true });
    }
    return envs;
  }

  /** Writes the kubeconfig's and the projected volumes' tokens anew. */
  async refreshTokens(): Promise<void> {
    if (this.automountsToken()) await this.writeServiceAccountKubeconfig();
    await writeVolumes(this.volumeContext(), hasServiceAccountToken);
  }

  private volumeContext(): VolumeContext {
    const pod = this.pod();
    return {
      pod,
      volumesDir: join(this.dir, "volumes"),
      source: apiObjectSource(this.ctx.core, pod.metadata!.namespace!),
      token: (audience, seconds) => requestPodToken(this.ctx.core, this.pod(), audience, seconds),
      caPem: this.ctx.apiServer.caPem,
    };
  }

  private automountsToken(): boolean {
    return this.pod().spec?.automountServiceAccountToken !== false;
  }

  private kubeconfigPath(): string {
    return join(this.dir, "kubeconfig");
  }

  private async writeServiceAccountKubeconfig(): Promise<void> {
    const pod = this.pod();
    const token = await requestPodToken(this.ctx.core, pod, undefined, TOKEN_SECONDS);
    const { url, caPem } = this.ctx.apiServer;
    const file = this.kubeconfigPath();
    writeFileSync(`${file}.tmp`, serviceAccountKubeconfig(url.origin, caPem, token, pod.metadata!.namespace!), {
      mode: 0o600,
    });
    renameSync(`${file}.tmp`, file);
  }

  private baseEnv(): Record<string, string> {
    const pod = this.pod();
    const env: Record<string, string> = {
      PATH: this.ctx.path,
      HOME: this.home,
      TMPDIR: join(this.home, "tmp"),
      HOSTNAME: pod.metadata!.name!,
      ...(this.ctx.crewaiPython ? { KUBECREW_CREWAI_PYTHON: this.ctx.crewaiPython } : {}),
      KUBERNETES_SERVICE_HOST: this.ctx.apiServer.url.hostname,
      KUBERNETES_SERVICE_PORT: this.ctx.apiServer.url.port,
      KUBERNETES_SERVICE_PORT_HTTPS: this.ctx.apiServer.url.port,
    };
    if (this.automountsToken()) env.KUBECONFIG = this.kubeconfigPath();
    return env;
  }
}
