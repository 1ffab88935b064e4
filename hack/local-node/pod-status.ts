import type { V1Pod } from "@kubernetes/client-node";

/** Status fields as they go over the wire (times as RFC 3339 strings). */
type Wire = Record<string, unknown>;

/** What the local node knows about one container of a pod, as the kubelet would track it. */
export type ContainerState =
  | { kind: "waiting"; reason: string; message?: string }
  | { kind: "running"; startedAt: Date; pid: number }
  | {
      kind: "terminated";
      exitCode: number;
      signal?: number;
      reason: string;
      message?: string;
      startedAt?: Date;
      finishedAt: Date;
      pid?: number;
    };

export interface ContainerRun {
  name: string;
  image: string;
  state: ContainerState;
  lastTerminated?: ContainerState & { kind: "terminated" };
  restartCount: number;
}

export interface PodRun {
  startTime: Date;
  /** Volumes, env and service-account credentials are in place. */
  sandboxReady: boolean;
  initContainers: ContainerRun[];
  containers: ContainerRun[];
  /** Set when the node ends the pod itself: DeadlineExceeded, deletion, or a node restart. */
  failure?: { reason: string; message: string };
}

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed";

/** RFC 3339 without fractions, as the apiserver writes metav1.Time. */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, "Z");
}

function terminated(run: ContainerRun): run is ContainerRun & { state: { kind: "terminated" } } {
  return run.state.kind === "terminated";
}

export function podPhase(run: PodRun, restartPolicy: string): PodPhase {
  const exitedWith = (r: ContainerRun) => (r.state.kind === "terminated" ? r.state.exitCode : undefined);
  if (run.failure) return "Failed";
  if (run.initContainers.some((c) => terminated(c) && c.state.exitCode !== 0 && restartPolicy === "Never")) {
    return "Failed";
  }
  const initDone = run.initContainers.every((c) => exitedWith(c) === 0);
  if (!initDone) return "Pending";
  if (run.containers.length > 0 && run.containers.every(terminated)) {
    if (restartPolicy === "Always") return "Running";
    return run.containers.every((c) => exitedWith(c) === 0) ? "Succeeded" : "Failed";
  }
  return run.containers.some((c) => c.state.kind !== "waiting") ? "Running" : "Pending";
}

function containerState(state: ContainerState): Wire {
  switch (state.kind) {
    case "waiting":
      return { waiting: { reason: state.reason, message: state.message } };
    case "running":
      return { running: { startedAt: kubeTime(state.startedAt) } };
    case "terminated":
      return {
        terminated: {
          exitCode: state.exitCode,
          signal: state.signal,
          reason: state.reason,
          message: state.message,
          startedAt: state.startedAt ? kubeTime(state.startedAt) : undefined,
          finishedAt: kubeTime(state.finishedAt),
          containerID: state.pid ? `kubecrew-local://${state.pid}` : undefined,
        },
      };
  }
}

function containerStatus(run: ContainerRun): Wire {
  const pid = run.state.kind === "running" || run.state.kind === "terminated" ? run.state.pid : undefined;
  return {
    name: run.name,
    image: run.image,
    imageID: "",
    containerID: pid ? `kubecrew-local://${pid}` : undefined,
    ready: run.state.kind === "running",
    started: run.state.kind === "running",
    restartCount: run.restartCount,
    state: containerState(run.state),
    lastState: run.lastTerminated ? containerState(run.lastTerminated) : {},
  };
}

/**
 * The pod status the kubelet would report for `run`: phase, conditions and container statuses. The Job controller reads
 * the phase (Succeeded/Failed counts), the Ready condition (status.ready) and restart counts (backoffLimit with
 * restartPolicy OnFailure). Conditions the node does not own (PodScheduled, DisruptionTarget) are kept from `pod`.
 */
export function podStatus(pod: V1Pod, run: PodRun, now: Date): Wire {
  const restartPolicy = pod.spec?.restartPolicy ?? "Always";
  const phase = podPhase(run, restartPolicy);
  const terminal = phase === "Succeeded" || phase === "Failed";
  const initialized = run.initContainers.every((c) => terminated(c) && c.state.exitCode === 0);
  const allRunning = run.containers.length > 0 && run.containers.every((c) => c.state.kind === "running");
  const ready = allRunning && !terminal;

  // Conditions read from the informer carry Date objects; JSON turns them back into RFC 3339 strings.
  const previous = new Map((pod.status?.conditions ?? []).map((c) => [c.type, c]));
  const condition = (type: string, status: boolean, reason?: string): Wire => {
    const value = status ? "True" : "False";
    const before = previous.get(type);
    const since = before && before.status === value && before.lastTransitionTime ? before.lastTransitionTime : now;
    return { type, status: value, reason, lastProbeTime: null, lastTransitionTime: kubeTime(new Date(since)) };
  };
  const notReadyReason = terminal ? "PodCompleted" : "ContainersNotReady";
  const owned = new Set(["PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"]);
  const conditions = [
    ...[...previous.values()]
      .filter((c) => !owned.has(c.type))
      .map((c) => ({ ...c, lastProbeTime: null, lastTransitionTime: kubeTime(new Date(c.lastTransitionTime ?? now)) })),
    condition("PodReadyToStartContainers", run.sandboxReady && !terminal),
    condition(
      "Initialized",
      initialized,
      initialized ? undefined : terminal ? "PodCompleted" : "ContainersNotInitialized",
    ),
    condition("ContainersReady", ready, ready ? undefined : notReadyReason),
    condition("Ready", ready, ready ? undefined : notReadyReason),
  ];

  return {
    phase,
    reason: run.failure?.reason ?? null,
    message: run.failure?.message ?? null,
    hostIP: "127.0.0.1",
    hostIPs: [{ ip: "127.0.0.1" }],
    podIP: "127.0.0.1",
    podIPs: [{ ip: "127.0.0.1" }],
    startTime: kubeTime(run.startTime),
    conditions,
    initContainerStatuses: run.initContainers.map(containerStatus),
    containerStatuses: run.containers.map(containerStatus),
  };
}
