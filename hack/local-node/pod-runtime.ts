import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiException, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { CoreV1Api, V1Container, V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";
import { startContainerProcess, type ContainerProcess, type ProcessExit } from "./container-process.ts";
import { ContainerConfigError, containerEnv, expandVariables, type ObjectSource } from "./env.ts";
import { podPhase, podStatus, type ContainerRun, type PodRun } from "./pod-status.ts";
import { requestPodToken, serviceAccountKubeconfig } from "./service-account.ts";
import { hasServiceAccountToken, mountVolumes, writeVolumes, type VolumeContext } from "./volumes.ts";

/** What every pod on the node shares. */
export interface NodeContext {
  core: CoreV1Api;
  log: Logger;
  /** Per-pod directories live under here. */
  podsDir: string;
  pgidDir: string;
  /** PATH of every container: <repo>/node_modules/.bin, the `kubecrew` shim, the system. */
  path: string;
  apiServer: { url: URL; caPem: Buffer };
}

const TOKEN_SECONDS = 3600;
/** The kubelet refreshes projected tokens at 80% of their life. */
const TOKEN_REFRESH_MS = TOKEN_SECONDS * 800;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name}`;
}

/**
 * One pod bound to the local node, from creation to deletion: writes its service-account kubeconfig and volumes, runs
 * its init containers one after another and then its containers as processes, reports status as the kubelet does, and
 * kills everything when the pod is deleted or its activeDeadlineSeconds pass.
 */
export class PodRuntime {
  readonly uid: string;
  readonly dir: string;
  readonly root: string;
  private pod: V1Pod;
  private readonly ctx: NodeContext;
  private readonly log: Logger;
  private readonly run: PodRun;
  private readonly processes = new Map<string, ContainerProcess>();
  private starting = false;
  private started = false;
  private ending: Promise<void> | undefined;
  private deleting = false;
  private timers: NodeJS.Timeout[] = [];
  private statusQueued = false;
  private statusChain: Promise<void> = Promise.resolve();

  constructor(ctx: NodeContext, pod: V1Pod) {
    this.ctx = ctx;
    this.pod = pod;
    this.uid = pod.metadata!.uid!;
    this.log = ctx.log.child({ pod: podKey(pod) });
    this.dir = join(ctx.podsDir, `${pod.metadata!.namespace}_${pod.metadata!.name}_${this.uid}`);
    this.root = join(this.dir, "root");
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
  }

  /** Log file of a container; `kubectl logs` reads it through the node's kubelet API. */
  logFile(container: string): string {
    return join(this.dir, "logs", `${container}.log`);
  }

  /** The container `kubectl logs` shows when none is named. */
  firstContainer(): string {
    return this.pod.spec?.containers[0]?.name ?? "";
  }

  get name(): string {
    return podKey(this.pod);
  }

  isTerminal(): boolean {
    const phase = podPhase(this.run, this.pod.spec?.restartPolicy ?? "Always");
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
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Node shutdown: stop the processes, leave the pod objects alone. */
  async shutdown(): Promise<void> {
    await this.end(undefined, 2);
  }

  private objectSource(): ObjectSource {
    const { core } = this.ctx;
    const namespace = this.pod.metadata!.namespace!;
    const read = async <T>(fetch: () => Promise<T>) => {
      try {
        return await fetch();
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    };
    const decode = (data: Record<string, string> | undefined, encoding: BufferEncoding) =>
      Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, encoding)]));
    return {
      async configMap(name) {
        const cm = await read(() => core.readNamespacedConfigMap({ name, namespace }));
        return cm && { ...decode(cm.data, "utf8"), ...decode(cm.binaryData, "base64") };
      },
      async secret(name) {
        const secret = await read(() => core.readNamespacedSecret({ name, namespace }));
        return secret && decode(secret.data, "base64");
      },
    };
  }

  private volumeContext(): VolumeContext {
    return {
      pod: this.pod,
      volumesDir: join(this.dir, "volumes"),
      root: this.root,
      source: this.objectSource(),
      token: (audience, seconds) => requestPodToken(this.ctx.core, this.pod, audience, seconds),
      caPem: this.ctx.apiServer.caPem,
    };
  }

  private automountsToken(): boolean {
    return this.pod.spec?.automountServiceAccountToken !== false;
  }

  private kubeconfigPath(): string {
    return join(this.dir, "kubeconfig");
  }

  private async writeServiceAccountKubeconfig(): Promise<void> {
    const token = await requestPodToken(this.ctx.core, this.pod, undefined, TOKEN_SECONDS);
    const { url, caPem } = this.ctx.apiServer;
    const file = this.kubeconfigPath();
    writeFileSync(`${file}.tmp`, serviceAccountKubeconfig(url.origin, caPem, token, this.pod.metadata!.namespace!), {
      mode: 0o600,
    });
    renameSync(`${file}.tmp`, file);
  }

  private baseEnv(): Record<string, string> {
    const env: Record<string, string> = {
      PATH: this.ctx.path,
      HOME: this.root,
      TMPDIR: join(this.root, "tmp"),
      HOSTNAME: this.pod.metadata!.name!,
      KUBECREW_CONTAINER_ROOT: this.root,
      KUBERNETES_SERVICE_HOST: this.ctx.apiServer.url.hostname,
      KUBERNETES_SERVICE_PORT: this.ctx.apiServer.url.port,
      KUBERNETES_SERVICE_PORT_HTTPS: this.ctx.apiServer.url.port,
    };
    if (this.automountsToken()) env.KUBECONFIG = this.kubeconfigPath();
    return env;
  }

  /** Everything a container needs before it can start; a missing Secret or ConfigMap is retried on the next sync. */
  private async prepare(): Promise<Map<string, Record<string, string>>> {
    mkdirSync(join(this.dir, "logs"), { recursive: true });
    mkdirSync(join(this.root, "tmp"), { recursive: true });
    mkdirSync(join(this.root, "dev"), { recursive: true }); // for /dev/termination-log
    if (this.automountsToken()) await this.writeServiceAccountKubeconfig();
    const volumes = this.volumeContext();
    await writeVolumes(volumes);
    const envs = new Map<string, Record<string, string>>();
    const source = this.objectSource();
    for (const container of [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])]) {
      envs.set(container.name, await containerEnv(this.pod, container, this.baseEnv(), source));
      mountVolumes(volumes, container);
    }
    return envs;
  }

  private async start(): Promise<void> {
    this.starting = true;
    let envs: Map<string, Record<string, string>>;
    try {
      envs = await this.prepare();
    } catch (error) {
      this.starting = false;
      const config = error instanceof ContainerConfigError;
      const message = error instanceof Error ? error.message : String(error);
      if (!config) this.log.warn({ err: error }, "Preparing the pod failed; retrying");
      for (const c of [...this.run.initContainers, ...this.run.containers]) {
        c.state = { kind: "waiting", reason: config ? "CreateContainerConfigError" : "ContainerCreating", message };
      }
      void this.writeStatus();
      return;
    }
    this.started = true;
    this.starting = false;
    if (this.ending) return;
    this.run.sandboxReady = true;
    this.armTimers();
    this.log.info("Starting containers");
    void this.writeStatus();

    const restartPolicy = this.pod.spec?.restartPolicy ?? "Always";
    const initSpecs = this.pod.spec?.initContainers ?? [];
    for (const [i, spec] of initSpecs.entries()) {
      const exit = await this.runContainer(spec, this.run.initContainers[i]!, envs.get(spec.name)!, "init");
      if (this.ending || exit !== 0) {
        if (!this.ending && restartPolicy === "Never") this.log.info({ container: spec.name }, "Init container failed");
        await this.finish();
        return;
      }
    }
    const specs = this.pod.spec?.containers ?? [];
    await Promise.all(specs.map((spec, i) => this.runContainer(spec, this.run.containers[i]!, envs.get(spec.name)!)));
    await this.finish();
  }

  private async finish(): Promise<void> {
    this.clearTimers();
    await this.writeStatus();
    this.log.info({ phase: podPhase(this.run, this.pod.spec?.restartPolicy ?? "Always") }, "Pod finished");
  }

  /** Runs one container until it is done for good: restarts per restartPolicy, with a growing back-off. */
  private async runContainer(
    spec: V1Container,
    run: ContainerRun,
    env: Record<string, string>,
    kind: "init" | "main" = "main",
  ): Promise<number> {
    const policy = this.pod.spec?.restartPolicy ?? "Always";
    let backoffMs = 1000;
    for (;;) {
      if (this.ending) return 137;
      const argv = [...(spec.command ?? []), ...(spec.args ?? [])].map((part) => expandVariables(part, env));
      let exit: ProcessExit;
      let pid: number | undefined;
      const startedAt = new Date();
      if (!spec.command?.length) {
        // The image is ignored, so its entrypoint is unknown: a container must name its command.
        exit = {
          exitCode: 128,
          startError: "the local node runs `command` (+ `args`); the image's entrypoint is unknown",
        };
      } else {
        const cwd = join(this.root, spec.workingDir ?? "/");
        mkdirSync(cwd, { recursive: true });
        const proc = startContainerProcess({
          argv,
          cwd,
          env,
          logFile: this.logFile(spec.name),
          pgidDir: this.ctx.pgidDir,
        });
        pid = proc.pid || undefined;
        if (proc.pid) {
          this.processes.set(spec.name, proc);
          run.state = { kind: "running", startedAt, pid: proc.pid };
          void this.writeStatus();
        }
        exit = await proc.exited;
        this.processes.delete(spec.name);
      }
      run.state = {
        kind: "terminated",
        exitCode: exit.exitCode,
        signal: exit.signal,
        reason: exit.startError ? "StartError" : exit.exitCode === 0 ? "Completed" : "Error",
        message: exit.startError ?? this.terminationMessage(spec, exit.exitCode),
        startedAt,
        finishedAt: new Date(),
        pid,
      };
      this.log.info({ container: spec.name, exitCode: exit.exitCode, error: exit.startError }, "Container exited");
      void this.writeStatus();
      const restart =
        !this.ending &&
        (kind === "init"
          ? exit.exitCode !== 0 && policy !== "Never"
          : policy === "Always" || (policy === "OnFailure" && exit.exitCode !== 0));
      if (!restart) return exit.exitCode;
      run.lastTerminated = run.state;
      run.state = { kind: "waiting", reason: "CrashLoopBackOff", message: `back-off ${backoffMs / 1000}s restarting` };
      void this.writeStatus();
      await sleep(backoffMs);
      backoffMs = Math.min(backoffMs * 2, 30_000);
      run.restartCount += 1;
    }
  }

  /**
   * The kubelet's termination message: what the process wrote to <root><terminationMessagePath> (default
   * /dev/termination-log), at most 4 KiB; with FallbackToLogsOnError and a failure, the end of the log instead.
   */
  private terminationMessage(spec: V1Container, exitCode: number): string | undefined {
    const limit = 4096;
    const read = (file: string) => {
      try {
        const text = readFileSync(file, "utf8");
        return text.length > limit ? text.slice(-limit) : text;
      } catch {
        return "";
      }
    };
    const written = read(join(this.root, spec.terminationMessagePath ?? "/dev/termination-log"));
    if (written) return written;
    if (spec.terminationMessagePolicy === "FallbackToLogsOnError" && exitCode !== 0) {
      return read(this.logFile(spec.name)).split("\n").slice(-80).join("\n").slice(-2048) || undefined;
    }
    return undefined;
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
    if (this.automountsToken() || (this.pod.spec?.volumes ?? []).some(hasServiceAccountToken)) {
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
      if (this.automountsToken()) await this.writeServiceAccountKubeconfig();
      await writeVolumes(this.volumeContext(), hasServiceAccountToken);
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
        await this.writeStatus();
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
      if (!isNotFound(error) && !(error instanceof ApiException && error.code === 409)) {
        this.log.warn({ err: error }, "Deleting the pod failed");
        this.deleting = false; // the next sync tries again
      }
    }
  }

  /** Coalesces: at most one status write in flight and one queued, each sending the latest state. */
  private writeStatus(): Promise<void> {
    if (this.statusQueued) return this.statusChain;
    this.statusQueued = true;
    this.statusChain = this.statusChain.then(async () => {
      this.statusQueued = false;
      await this.patchStatus();
    });
    return this.statusChain;
  }

  private async patchStatus(): Promise<void> {
    const { name, namespace } = this.pod.metadata!;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const body = { status: podStatus(this.pod, this.run, new Date()) };
        await this.ctx.core.patchNamespacedPodStatus(
          { name: name!, namespace: namespace!, body },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        );
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        this.log.warn({ err: error, attempt }, "Writing pod status failed");
        await sleep(500 * (attempt + 1));
      }
    }
  }
}
