import type { Logger } from "../core/logger.ts";
import type { StepSummary } from "./step-recorder.ts";

/**
 * Hands a task's steps so far to `report` after each step, one write at a time: a step that ends while a write is
 * running is folded into the next write (the newest summary wins). A failing write is logged and does not stop the
 * task; the outcome carries the steps anyway.
 */
export class StepReporter {
  private latest: StepSummary | undefined;
  private running: Promise<void> | undefined;
  private readonly report: (sofar: StepSummary) => Promise<void>;
  private readonly log: Logger;

  constructor(report: (sofar: StepSummary) => Promise<void>, log: Logger) {
    this.report = report;
    this.log = log;
  }

  push(sofar: StepSummary): void {
    this.latest = sofar;
    this.running ??= this.drain();
  }

  /** Resolves once every pushed summary is written (or failed). */
  async flushed(): Promise<void> {
    await this.running;
  }

  private async drain(): Promise<void> {
    while (this.latest) {
      const next = this.latest;
      this.latest = undefined;
      try {
        await this.report(next);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, "Could not report the steps so far");
      }
    }
    this.running = undefined;
  }
}
