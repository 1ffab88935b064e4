import { spawn } from "node:child_process";
import { closeSync, openSync, rmSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";

export interface ProcessExit {
  exitCode: number;
  signal?: number;
  /** Set when the process could not start at all (command not found, ...). */
  startError?: string;
}

export interface ContainerProcess {
  pid: number;
  exited: Promise<ProcessExit>;
  /** SIGTERM to the process group, SIGKILL after `graceSeconds` if anything is still there. */
  stop(graceSeconds: number): Promise<ProcessExit>;
}

export interface ProcessSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  logFile: string;
  /** A file named after each live process group goes here, so `local-cluster.sh down` can kill leftovers. */
  pgidDir: string;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * Runs a container's command as its own process group (as a container's PID namespace would hold it): stdout and
 * stderr append to `logFile`, and when the main process exits whatever it left behind in its group is killed.
 */
export function startContainerProcess(spec: ProcessSpec): ContainerProcess {
  const [command, ...args] = spec.argv;
  const log = openSync(spec.logFile, "a");
  const child = spawn(command!, args, {
    cwd: spec.cwd,
    env: spec.env,
    detached: true,
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  const pid = child.pid ?? 0;
  const pgidFile = join(spec.pgidDir, String(pid));
  if (pid) writeFileSync(pgidFile, "");

  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("error", (error) => {
      if (!pid) resolve({ exitCode: 128, startError: error.message });
    });
    child.once("exit", (code, signal) => {
      killGroup(pid, "SIGKILL");
      rmSync(pgidFile, { force: true });
      if (signal) {
        const number = constants.signals[signal] ?? 9;
        resolve({ exitCode: 128 + number, signal: number });
      } else {
        resolve({ exitCode: code ?? 0 });
      }
    });
  });

  return {
    pid,
    exited,
    async stop(graceSeconds) {
      if (!pid) return exited;
      killGroup(pid, "SIGTERM");
      const timer = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), graceSeconds * 1000).unref(),
      );
      if ((await Promise.race([exited, timer])) === "timeout") killGroup(pid, "SIGKILL");
      return exited;
    },
  };
}
