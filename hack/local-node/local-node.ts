import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
} from "@kubernetes/client-node";
import type { V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";
import { startKubeletServer } from "./kubelet-server.ts";
import { registerNode } from "./node-registration.ts";
import type { NodeContext } from "./node-context.ts";
import { PodRuntime } from "./pod-runtime.ts";
import { kubeTime } from "./pod-status.ts";
import { checkMountNamespaces } from "./pod-namespace.ts";

export interface LocalNodeOptions {
  kubeconfigPath: string;
  /** Pod directories, the `kubecrew` shim, pid files and the `ready` marker go here. */
  stateDir: string;
  nodeName: string;
  /** The repository whose code pods run: its node_modules/.bin leads PATH and the `kubecrew` shim runs its CLI. */
  repoRoot: string;
  /** Serving certificate for the kubelet API (pod logs); without it `kubectl logs` is unavailable. */
  serving?: { certFile: string; keyFile: string };
  log: Logger;
}

const RESYNC_MS = 3000;

function writeShim(binDir: string, repoRoot: string): void {
  mkdirSync(binDir, { recursive: true });
  const shim = join(binDir, "kubecrew");
  const node = join(repoRoot, "node_modules", ".bin", "node");
  writeFileSync(
    shim,
    `#!/bin/sh\n# The kubecrew CLI of ${repoRoot}\nexec "${node}" "${join(repoRoot, "cli", "main.ts")}" "$@"\n`,
  );
  chmodSync(shim, 0o755);
}

function clusterCa(kc: KubeConfig): Buffer {
  const cluster = kc.getCurrentCluster();
  if (cluster?.caData) return Buffer.from(cluster.caData, "base64");
  if (cluster?.caFile) return readFileSync(cluster.caFile);
  throw new Error("the kubeconfig has no certificate authority for the cluster");
}

/**
 * The local node: a Node object, a loop that binds unscheduled pods to it (there is no scheduler), and a PodRuntime per
 * pod bound to it. Returns once the node is registered and watching.
 */
export async function startLocalNode(options: LocalNodeOptions): Promise<{ stop(): Promise<void> }> {
  const { log, nodeName } = options;
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);

  checkMountNamespaces();
  const podsDir = join(options.stateDir, "pods");
  const pgidDir = join(options.stateDir, "pgids");
  const binDir = join(options.stateDir, "bin");
  rmSync(join(options.stateDir, "ready"), { force: true });
  rmSync(podsDir, { recursive: true, force: true });
  mkdirSync(podsDir, { recursive: true });
  mkdirSync(pgidDir, { recursive: true });
  writeShim(binDir, options.repoRoot);

  const ctx: NodeContext = {
    core,
    log,
    podsDir,
    pgidDir,
    path: [
      join(options.repoRoot, "node_modules", ".bin"),
      binDir,
      "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    ].join(":"),
    ...crewaiPython(options.repoRoot),
    stateDir: options.stateDir,
    repoRoot: options.repoRoot,
    apiServer: { url: new URL(kc.getCurrentCluster()!.server), caPem: clusterCa(kc) },
  };
  const runtimes = new Map<string, PodRuntime>();

  const kubelet = options.serving
    ? await startKubeletServer(
        { ...options.serving, ca: ctx.apiServer.caPem },
        {
          find(namespace, pod, container) {
            const runtime = [...runtimes.values()].find((r) => r.name === `${namespace}/${pod}`);
            if (!runtime) return undefined;
            return { file: runtime.logFile(container ?? runtime.firstContainer()), live: () => !runtime.isTerminal() };
          },
        },
      )
    : undefined;

  const version = await kc.makeApiClient(VersionApi).getCode();
  const registration = await registerNode(core, coordination, {
    name: nodeName,
    kubeletPort: kubelet?.port ?? 0,
    kubeletVersion: version.gitVersion,
    log,
  });

  const binding = new Set<string>();
  const bind = async (pod: V1Pod) => {
    const { name, namespace, uid } = pod.metadata!;
    if (binding.has(uid!)) return;
    binding.add(uid!);
    try {
      await core.createNamespacedBinding({
        namespace: namespace!,
        body: { metadata: { name, namespace, uid }, target: { apiVersion: "v1", kind: "Node", name: nodeName } },
      });
      log.debug({ pod: `${namespace}/${name}` }, "Bound pod");
    } catch (error) {
      if (error instanceof ApiException && (error.code === 404 || error.code === 409)) return;
      binding.delete(uid!);
      log.warn({ err: error, pod: `${namespace}/${name}` }, "Binding the pod failed; retrying");
    }
  };

  const markLost = async (pod: V1Pod) => {
    // Running here before this node process started: its processes are gone with the previous node process.
    const { name, namespace } = pod.metadata!;
    const status = {
      phase: "Failed",
      reason: "LocalNodeRestarted",
      message: "The local node restarted while the pod ran",
    };
    await core
      .patchNamespacedPodStatus(
        { name: name!, namespace: namespace!, body: { status } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      )
      .catch((error: unknown) => log.warn({ err: error }, "Marking a lost pod failed"));
  };

  const reconcile = (pod: V1Pod) => {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    if (!pod.spec?.nodeName) {
      const scheduler = pod.spec?.schedulerName ?? "default-scheduler";
      if (!pod.metadata?.deletionTimestamp && scheduler === "default-scheduler") void bind(pod);
      return;
    }
    if (pod.spec.nodeName !== nodeName) return;
    binding.delete(uid);
    let runtime = runtimes.get(uid);
    if (!runtime) {
      const phase = pod.status?.phase;
      if (phase === "Succeeded" || phase === "Failed") {
        if (pod.metadata?.deletionTimestamp) {
          void core
            .deleteNamespacedPod({
              name: pod.metadata.name!,
              namespace: pod.metadata.namespace!,
              gracePeriodSeconds: 0,
            })
            .catch(() => undefined);
        }
        return;
      }
      if (phase === "Running") {
        void markLost(pod);
        return;
      }
      runtime = new PodRuntime(ctx, pod);
      runtimes.set(uid, runtime);
    }
    runtime.sync(pod);
  };

  const forget = (pod: V1Pod) => {
    const uid = pod.metadata?.uid;
    const runtime = uid ? runtimes.get(uid) : undefined;
    binding.delete(uid ?? "");
    if (!runtime) return;
    runtimes.delete(uid!);
    void runtime.forget();
  };

  const informer = makeInformer(kc, "/api/v1/pods", () => core.listPodForAllNamespaces());
  informer.on("add", reconcile);
  informer.on("update", reconcile);
  informer.on("delete", forget);
  let stopped = false;
  informer.on("error", (error: unknown) => {
    if (stopped) return;
    log.warn({ err: error }, "Pod watch failed; restarting");
    setTimeout(() => void informer.start().catch(() => undefined), 1000);
  });
  await informer.start();

  // Level-based safety net: retries (missing Secrets, failed binds) and pods whose delete event was missed.
  const resync = setInterval(() => {
    const live = new Set<string>();
    for (const pod of informer.list()) {
      live.add(pod.metadata?.uid ?? "");
      reconcile(pod);
    }
    for (const [uid, runtime] of runtimes) {
      if (!live.has(uid)) {
        runtimes.delete(uid);
        void runtime.forget();
      }
    }
  }, RESYNC_MS);

  writeFileSync(join(options.stateDir, "ready"), kubeTime(new Date()));
  log.info({ node: nodeName, kubeletPort: kubelet?.port }, "Local node ready");

  return {
    async stop() {
      stopped = true;
      clearInterval(resync);
      registration.stop();
      await informer.stop();
      await Promise.all([...runtimes.values()].map((r) => r.shutdown()));
      await kubelet?.close();
      rmSync(join(options.stateDir, "ready"), { force: true });
    },
  };
}

/** The crewai runtime's Python (hack/crewai-venv.sh python) when its virtual environment has been made. */
function crewaiPython(repoRoot: string): { crewaiPython?: string } {
  try {
    const python = execFileSync("bash", [join(repoRoot, "hack", "crewai-venv.sh"), "python"], {
      encoding: "utf8",
    }).trim();
    return existsSync(python) ? { crewaiPython: python } : {};
  } catch {
    return {};
  }
}
