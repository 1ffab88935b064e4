/**
 * The peak resident memory of the task runners running on this machine, sampled from /proc: kubecrew dev and the local
 * node both start a task's runner (`kubecrew runner`) as a process here, and on the crewai runtime the runner starts
 * the adapter (`python -m kubecrew_crewai`) as its child. A runner's figure is its own peak (VmHWM) plus its adapter's:
 * the two run side by side for the whole task, so their peaks add up to within what the two hold at the adapter's
 * peak. Sampled every `everyMs`; a process's VmHWM only grows, so the last sample before it ends is its peak so far.
 */
import { readdirSync, readFileSync } from "node:fs";

type Kind = "runner" | "adapter" | "other";

interface Process {
  pid: number;
  firstSeen: number;
  kind: Kind;
  parent: number;
  peakKiB: number;
}

export class RunnerPeaks {
  /** The processes in the last listing of /proc. Pids are reused (pid_max is 32768 here): an ended pid is forgotten. */
  private readonly live = new Map<number, Process>();
  /** Runners and adapters that ended since the last reset, with their last sample. */
  private ended: Process[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(everyMs = 50) {
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  /** Forgets the runners that ended (the next measurement starts). */
  reset(): void {
    this.sample();
    this.ended = [];
  }

  /** The largest runner figure (its peak plus its adapter's) since the last reset, in MiB; 0 when none was seen. */
  largestMiB(): number {
    this.sample();
    const all = [...this.ended, ...this.live.values()].filter((p) => p.kind !== "other");
    const runners = new Map(all.filter((p) => p.kind === "runner").map((p) => [p.pid, p.peakKiB]));
    for (const p of all) {
      if (p.kind === "adapter" && runners.has(p.parent)) runners.set(p.parent, runners.get(p.parent)! + p.peakKiB);
    }
    return Math.max(0, ...runners.values()) / 1024;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const now = performance.now();
    const listed = new Set(readdirSync("/proc").map(Number).filter(Number.isInteger));
    for (const [pid, p] of this.live) {
      if (listed.has(pid)) continue;
      this.live.delete(pid);
      if (p.kind !== "other") this.ended.push(p);
    }
    for (const pid of listed) {
      let p = this.live.get(pid);
      if (!p) this.live.set(pid, (p = { pid, firstSeen: now, kind: "other", parent: 0, peakKiB: 0 }));
      try {
        // Between fork and exec a child shows its parent's command line (an adapter would look like its runner):
        // a process is judged again until it has had a second to exec.
        if (now - p.firstSeen <= 1000 || (p.kind !== "other" && p.peakKiB === 0)) p.kind = kindOf(pid);
        if (p.kind !== "other") {
          // A zombie (ended, not yet reaped) shows no memory: the peak read before stands.
          const read = status(pid);
          p.parent ||= read.parent;
          p.peakKiB = Math.max(p.peakKiB, read.peakKiB);
        }
      } catch {
        // Ended between the listing and the read: its last sample stands.
      }
    }
  }
}

function kindOf(pid: number): Kind {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  if (argv.includes("kubecrew_crewai")) return "adapter";
  // `kubecrew runner`: the CLI as the image, the local node's shim or kubecrew dev starts it.
  const at = argv.indexOf("runner");
  return at > 0 && /(kubecrew|kubecrew\.js|cli\/main\.ts)$/.test(argv[at - 1]!) ? "runner" : "other";
}

function status(pid: number): { parent: number; peakKiB: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
  return { parent: field("PPid"), peakKiB: field("VmHWM") };
}
