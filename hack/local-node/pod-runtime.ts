import { rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";
import { isConflict, isNotFound } from "./api-errors.ts";
import type { ContainerProcess } from "./container-process.ts";
import { runContainer, type ContainerRunContext } from "./container-run.ts";
import { ContainerConfigError } from "./env.ts";
import type { NodeContext } from "./node-context.ts";
import { PodSandbox, TOKEN_REFRESH_MS } from "./pod-sandbox.ts";
import { podPhase, type ContainerRun, type PodRun } from "./pod-status.ts";
import { PodStatusWriter } from "./pod-status-writer.ts";

function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name}`;
}

/**
 * One pod bound to the local node, from creation to deletion: prepares its sandbox (service-account kubeconfig,
 * volumes, environment), runs its init containers one after another and then its containers as processes, reports
 * status as the kubelet does, and kills everything when the pod is deleted or its activeDeadlineSeconds pass.
 */
export class PodRuntime {
  readonly uid: string;
  private pod: V1Pod;
  private readonly ctx: NodeContext;
  private readonly log: Logger;
  private readonly run: PodRun;
  private readonly sandbox: PodSandbox;
  private readonly status: PodStatusWriter;
  private readonly processes = new Map<string, ContainerProcess>();
  private starting = false;
  private started = false;
  private ending: Promise<void> | undefined;
  private deleting = false;
  private timers: NodeJS.Timeout[] = [];

  constructor(ctx: NodeContext, pod: V1Pod) {
    this.ctx = ctx;
    this.pod = pod;
    this.uid = pod.metadata!.uid!;
    this.log = ctx.log.child({ pod: podKey(pod) });
    this.sandbox = new PodSandbox(ctx, () => this.pod);
    const waiting = (c: V1Container): ContainerRun => ({
      name: c.name,
      image: c.image ?? "",
      state: { kind: "waiting", reason: "ContainerCreating" },
      restartCount: 0,
    });
    this.run = {
      startTime: new Date(),
      sandboxReady: false,
      initContainers: (pod.spec?.initContainers ?? []).map(waiting),
      containers: (pod.spec?.containers ?? []).map(waiting),
    };
    this.status = new PodStatusWriter({ core: ctx.core, log: this.log, pod: () => this.pod, run: this.run });
  }

  /** Log file of a container; `kubectl logs` reads it through the node's kubelet API. */
  logFile(container: string): string {
    return this.sandbox.logFile(container);
  }

  /** The container `kubectl logs` shows when none is named. */
  firstContainer(): string {
    return this.pod.spec?.containers[0]?.name ?? "";
  }

  get name(): string {
    return podKey(this.pod);
  }

  isTerminal(): boolean {
    const phase = podPhase(this.run, this.restartPolicy());
    return phase === "Succeeded" || phase === "Failed";
  }

  /** Level-based: called with the pod's latest state on every event and every resync. */
  sync(pod: V1Pod): void {
    this.pod = pod;
    if (pod.metadata?.deletionTimestamp) {
      void this.deleteFromNode();
      return;
    }
    if (!this.started && !this.starting && !this.ending) void this.start();
  }

  /** The pod object is gone from the API (force-deleted, or our own delete went through): stop and clean up. */
  async forget(): Promise<void> {
    await this.end(undefined, 0);
    rmSync(this.sandbox.dir, { recursive: true, force: true });
  }

  /** Node shutdown: stop the processes, leave the pod objects alone. */
  async shutdown(): Promise<void> {
    await this.end(undefined, 2);
  }

  private restartPolicy(): string {
    return this.pod.spec?.restartPolicy ?? "Always";
  }

  private async start(): Promise<void> {
    this.starting = true;
    let envs: Map<string, Record<string, string>>;
    try {
      envs = await this.sandbox.prepare();
    } catch (error) {
      this.starting = false;
      const config = error instanceof ContainerConfigError;
      const message = error instanceof Error ? error.message : String(error);
      if (!config) this.log.warn({ err: error }, "Preparing the pod failed; retrying");
      for (const c of [...this.run.initContainers, ...this.run.containers]) {
        c.state = { kind: "waiting", reason: config ? "CreateContainerConfigError" : "ContainerCreating", message };
      }
      void this.status.write();
      return;
    }
    this.started = true;
    this.starting = false;
    if (this.ending) return;
    this.run.sandboxReady = true;
    this.armTimers();
    this.log.info("Starting containers");
    void this.status.write();

    const containers: ContainerRunContext = {
      log: this.log,
      restartPolicy: this.restartPolicy(),
      dir: this.sandbox.dir,
      logFile: (container) => this.sandbox.logFile(container),
      terminationLog: (container) => this.sandbox.terminationLog(container),
      namespaceDir: (container) => this.sandbox.namespaceDir(container),
      mounts: (container) => this.sandbox.mounts(container),
      nodePaths: (env) => this.sandbox.nodePaths(env),
      pgidDir: this.ctx.pgidDir,
      ending: () => !!this.ending,
      processes: this.processes,
      changed: () => void this.status.write(),
    };
    const initSpecs = this.pod.spec?.initContainers ?? [];
    for (const [i, spec] of initSpecs.entries()) {
      const exit = await runContainer(containers, spec, this.run.initContainers[i]!, envs.get(spec.name)!, "init");
      if (this.ending || exit !== 0) {
        if (!this.ending && containers.restartPolicy === "Never") {
          this.log.info({ container: spec.name }, "Init container failed");
        }
        await this.finish();
        return;
      }
    }
    const specs = this.pod.spec?.containers ?? [];
    await Promise.all(
      specs.map((spec, i) => runContainer(containers, spec, this.run.containers[i]!, envs.get(spec.name)!)),
    );
    await this.finish();
  }

  private async finish(): Promise<void> {
    this.clearTimers();
    await this.status.write();
    this.log.info({ phase: podPhase(this.run, this.restartPolicy()) }, "Pod finished");
  }

  private armTimers(): void {
    const deadline = this.pod.spec?.activeDeadlineSeconds;
    if (deadline !== undefined) {
      const remaining = this.run.startTime.getTime() + deadline * 1000 - Date.now();
      this.timers.push(
        setTimeout(
          () => {
            this.log.info({ activeDeadlineSeconds: deadline }, "Active deadline exceeded");
            void this.end(
              { reason: "DeadlineExceeded", message: `Pod was active on the node longer than the specified deadline` },
              this.graceSeconds(),
            );
          },
          Math.max(0, remaining),
        ),
      );
    }
    if (this.sandbox.holdsTokens()) {
      const refresh = setInterval(() => void this.refreshTokens(), TOKEN_REFRESH_MS);
      refresh.unref();
      this.timers.push(refresh);
    }
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }

  private async refreshTokens(): Promise<void> {
    try {
      await this.sandbox.refreshTokens();
    } catch (error) {
      this.log.warn({ err: error }, "Refreshing service-account tokens failed");
    }
  }

  private graceSeconds(): number {
    return this.pod.metadata?.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
  }

  /**
   * Stops every process (SIGTERM, SIGKILL after the grace period) and reports the final status. `failure` makes the pod
   * Failed with that reason; without it a pod that is not yet terminal is Failed as the kubelet reports a killed pod.
   */
  private end(failure: { reason: string; message: string } | undefined, graceSeconds: number): Promise<void> {
    if (!this.ending) {
      this.ending = (async () => {
        this.clearTimers();
        const wasTerminal = this.isTerminal();
        if (failure && !wasTerminal) this.run.failure = failure;
        await Promise.all([...this.processes.values()].map((p) => p.stop(graceSeconds)));
        for (const c of [...this.run.initContainers, ...this.run.containers]) {
          if (c.state.kind === "waiting") {
            c.state = { kind: "terminated", exitCode: 137, reason: "ContainerStatusUnknown", finishedAt: new Date() };
          }
        }
        if (!this.isTerminal())
          this.run.failure = { reason: "Terminated", message: "The pod was stopped by the local node" };
        await sleep(10); // let the container loops record their exits
        await this.status.write();
      })();
    }
    return this.ending;
  }

  /** deletionTimestamp is set: kill, report, then remove the object as the kubelet does (grace period 0). */
  private async deleteFromNode(): Promise<void> {
    if (this.deleting) return;
    this.deleting = true;
    await this.end(undefined, this.graceSeconds());
    const { name, namespace } = this.pod.metadata!;
    try {
      await this.ctx.core.deleteNamespacedPod({
        name: name!,
        namespace: namespace!,
        gracePeriodSeconds: 0,
        body: { gracePeriodSeconds: 0, preconditions: { uid: this.uid } },
      });
    } catch (error) {
      if (!isNotFound(error) && !isConflict(error)) {
        this.log.warn({ err: error }, "Deleting the pod failed");
        this.deleting = false; // the next sync tries again
      }
    }
  }
}
