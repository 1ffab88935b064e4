import { cpus, hostname, release, totalmem } from "node:os";
import { ApiException, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";
import { kubeTime } from "./pod-status.ts";

export interface NodeRegistration {
  stop(): void;
}

const LEASE_NAMESPACE = "kube-node-lease";
const LEASE_SECONDS = 40;
const HEARTBEAT_MS = 10_000;

function microTime(date: Date): string {
  return date.toISOString().replace(/Z$/, "000Z");
}

function nodeStatus(kubeletPort: number, kubeletVersion: string, now: Date): Record<string, unknown> {
  const memory = `${Math.floor(totalmem() / 1024)}Ki`;
  const resources = { cpu: String(cpus().length), memory, pods: "110", "ephemeral-storage": "100Gi" };
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: kubeTime(now),
    lastTransitionTime: kubeTime(now),
  });
  return {
    capacity: resources,
    allocatable: resources,
    conditions: [
      condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "local node"),
      condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "local node"),
      condition("PIDPressure", "False", "KubeletHasSufficientPID", "local node"),
      condition("Ready", "True", "KubeletReady", "kubecrew local node runs pods as local processes"),
    ],
    addresses: [
      { type: "InternalIP", address: "127.0.0.1" },
      { type: "Hostname", address: hostname() },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
    nodeInfo: {
      machineID: "kubecrew-local",
      systemUUID: "kubecrew-local",
      bootID: String(process.pid),
      kernelVersion: release(),
      osImage: "kubecrew local node (pods run as local processes)",
      containerRuntimeVersion: "kubecrew-local://1",
      kubeletVersion,
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: process.arch === "x64" ? "amd64" : process.arch,
    },
  };
}

/**
 * Creates the Node (or takes over an existing one of that name), reports it Ready, and keeps its Lease in
 * kube-node-lease and its status heartbeat fresh, as the kubelet does.
 */
export async function registerNode(
  core: CoreV1Api,
  coordination: CoordinationV1Api,
  options: { name: string; kubeletPort: number; kubeletVersion: string; log: Logger },
): Promise<NodeRegistration> {
  const { name, kubeletPort, kubeletVersion, log } = options;
  try {
    await core.createNode({
      body: {
        metadata: {
          name,
          labels: {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": process.arch === "x64" ? "amd64" : process.arch,
            "kubecrew.io/local-node": "true",
          },
        },
      },
    });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }

  const writeStatus = () =>
    core.patchNodeStatus(
      { name, body: { status: nodeStatus(kubeletPort, kubeletVersion, new Date()) } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );

  const renewLease = async () => {
    const spec = {
      holderIdentity: name,
      leaseDurationSeconds: LEASE_SECONDS,
      renewTime: microTime(new Date()) as unknown as Date,
    };
    try {
      const lease = await coordination.readNamespacedLease({ name, namespace: LEASE_NAMESPACE });
      await coordination.replaceNamespacedLease({
        name,
        namespace: LEASE_NAMESPACE,
        body: { ...lease, spec: { ...lease.spec, ...spec } },
      });
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
      await coordination.createNamespacedLease({ namespace: LEASE_NAMESPACE, body: { metadata: { name }, spec } });
    }
  };

  await writeStatus();
  await renewLease().catch((error: unknown) => log.warn({ err: error }, "Creating the node lease failed"));
  let beats = 0;
  const timer = setInterval(() => {
    beats += 1;
    renewLease().catch((error: unknown) => log.warn({ err: error }, "Renewing the node lease failed"));
    if (beats % 6 === 0) writeStatus().catch((error: unknown) => log.warn({ err: error }, "Node heartbeat failed"));
  }, HEARTBEAT_MS);
  return { stop: () => clearInterval(timer) };
}
