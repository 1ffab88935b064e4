/**
 * The peak resident memory of the task runners running on this machine, sampled from /proc: kubecrew dev and the local
 * node both start a task's runner (`kubecrew runner`) as a process here, and on the crewai runtime the runner starts
 * the adapter (`python -m kubecrew_crewai`) as its child. A runner's figure is its own peak (VmHWM) plus its adapter's:
 * the two run side by side for the whole task, so their peaks add up to within what the two hold at the adapter's
 * peak. Sampled every `everyMs`; a process's VmHWM only grows, so the last sample before it ends is its peak so far.
 */
import { readdirSync, readFileSync } from "node:fs";

interface Seen {
  runner: boolean;
  parent: number;
  peakKiB: number;
}

export class RunnerPeaks {
  private readonly seen = new Map<number, Seen>();
  /**
   * Processes known not to be runners. A process is judged by its command line only once it has had a second to
   * exec: between fork and exec a child shows its parent's (a runner's adapter would look like a runner).
   */
  private readonly others = new Set<number>();
  private readonly firstSeen = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(everyMs = 50) {
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
  }

  /** Forgets the runners seen so far (the next measurement starts). */
  reset(): void {
    this.sample();
    this.seen.clear();
  }

  /** The largest runner figure (its peak plus its adapter's) since the last reset, in MiB; 0 when none was seen. */
  largestMiB(): number {
    this.sample();
    const totals = new Map<number, number>();
    for (const [pid, s] of this.seen) {
      const root = s.runner ? pid : s.parent;
      if (!s.runner && !this.seen.get(root)?.runner) continue;
      totals.set(root, (totals.get(root) ?? 0) + s.peakKiB);
    }
    return Math.max(0, ...totals.values()) / 1024;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const now = performance.now();
    for (const entry of readdirSync("/proc")) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || this.others.has(pid)) continue;
      const first = this.firstSeen.get(pid) ?? now;
      this.firstSeen.set(pid, first);
      const settled = now - first > 1000;
      try {
        let known = this.seen.get(pid);
        if (!known || !settled) {
          const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
          const at = argv.indexOf("runner");
          // `kubecrew runner`: the CLI as the image, the local node's shim or kubecrew dev starts it.
          const runner = at > 0 && /(kubecrew|kubecrew\.js|cli\/main\.ts)$/.test(argv[at - 1]!);
          const adapter = argv.includes("kubecrew_crewai");
          if (!runner && !adapter) {
            if (settled) this.others.add(pid);
            this.seen.delete(pid);
            continue;
          }
          known = { runner, parent: 0, peakKiB: 0 };
          this.seen.set(pid, Object.assign(this.seen.get(pid) ?? known, { runner }));
        }
        Object.assign(this.seen.get(pid)!, this.status(pid));
      } catch {
        // Ended between the listing and the read: its last sample stands.
      }
    }
  }

  private status(pid: number): { parent: number; peakKiB: number } {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
    return { parent: field("PPid"), peakKiB: field("VmHWM") };
  }
}
