import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { V1Container } from "@kubernetes/client-node";
import type { Logger } from "../../core/logger.ts";
import { startContainerProcess, type ContainerProcess, type ProcessExit } from "./container-process.ts";
import { expandVariables } from "./env.ts";
import { namespacedArgv, type ContainerMount } from "./pod-namespace.ts";
import type { ContainerRun } from "./pod-status.ts";
import { terminationMessage } from "./termination-message.ts";

/** What running a pod's container needs from its pod. */
export interface ContainerRunContext {
  log: Logger;
  /** The pod's restartPolicy (Always when unset). */
  restartPolicy: string;
  /** The pod's directory: a container's process starts there, then enters its own root (pod-namespace.ts). */
  dir: string;
  logFile(container: string): string;
  terminationLog(container: string): string;
  namespaceDir(container: string): string;
  mounts(container: V1Container): ContainerMount[];
  /** The node's paths the process needs (pod-namespace.ts), given its environment. */
  nodePaths(env: Record<string, string>): string[];
  pgidDir: string;
  /** The pod is ending: start nothing more. */
  ending(): boolean;
  /** The live process of each container, by name, for the pod to stop. */
  processes: Map<string, ContainerProcess>;
  /** The container's state changed: report it. */
  changed(): void;
}

/**
 * Runs one container until it is done for good: restarts per restartPolicy, with a growing back-off; `run` follows
 * its state as the kubelet reports it. Answers the last exit code (137 when the pod ended first).
 */
export async function runContainer(
  ctx: ContainerRunContext,
  spec: V1Container,
  run: ContainerRun,
  env: Record<string, string>,
  kind: "init" | "main" = "main",
): Promise<number> {
  const policy = ctx.restartPolicy;
  let backoffMs = 1000;
  for (;;) {
    if (ctx.ending()) return 137;
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
      writeFileSync(ctx.terminationLog(spec.name), ""); // each run of the container writes its own
      const proc = startContainerProcess({
        argv: namespacedArgv(
          ctx.namespaceDir(spec.name),
          ctx.mounts(spec),
          ctx.nodePaths(env),
          spec.workingDir ?? "/",
          argv,
        ),
        cwd: ctx.dir,
        env,
        logFile: ctx.logFile(spec.name),
        pgidDir: ctx.pgidDir,
      });
      pid = proc.pid || undefined;
      if (proc.pid) {
        ctx.processes.set(spec.name, proc);
        run.state = { kind: "running", startedAt, pid: proc.pid };
        ctx.changed();
      }
      exit = await proc.exited;
      ctx.processes.delete(spec.name);
    }
    run.state = {
      kind: "terminated",
      exitCode: exit.exitCode,
      signal: exit.signal,
      reason: exit.startError ? "StartError" : exit.exitCode === 0 ? "Completed" : "Error",
      message:
        exit.startError ??
        terminationMessage(ctx.terminationLog(spec.name), spec, exit.exitCode, ctx.logFile(spec.name)),
      startedAt,
      finishedAt: new Date(),
      pid,
    };
    ctx.log.info({ container: spec.name, exitCode: exit.exitCode, error: exit.startError }, "Container exited");
    ctx.changed();
    const restart =
      !ctx.ending() &&
      (kind === "init"
        ? exit.exitCode !== 0 && policy !== "Never"
        : policy === "Always" || (policy === "OnFailure" && exit.exitCode !== 0));
    if (!restart) return exit.exitCode;
    run.lastTerminated = run.state;
    run.state = { kind: "waiting", reason: "CrashLoopBackOff", message: `back-off ${backoffMs / 1000}s restarting` };
    ctx.changed();
    await sleep(backoffMs);
    backoffMs = Math.min(backoffMs * 2, 30_000);
    run.restartCount += 1;
  }
}
