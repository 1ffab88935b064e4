import { describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import type { StepSummary } from "./step-recorder.ts";
import { StepReporter } from "./step-reporter.ts";

const sofar = (stepCount: number): StepSummary => ({ steps: [], stepCount, toolsUsed: [] });

describe("StepReporter", () => {
  it("writes one summary at a time and folds the steps that end meanwhile into the newest", async () => {
    const written: number[] = [];
    let release: () => void = () => {};
    const reporter = new StepReporter(async (s) => {
      written.push(s.stepCount);
      if (s.stepCount === 1) await new Promise<void>((r) => (release = r));
    }, silentLogger());
    reporter.push(sofar(1));
    reporter.push(sofar(2));
    reporter.push(sofar(3));
    release();
    await reporter.flushed();
    expect(written).toEqual([1, 3]);
  });

  it("goes on after a failing write", async () => {
    const written: number[] = [];
    const reporter = new StepReporter(async (s) => {
      if (s.stepCount === 1) throw new Error("disk full");
      written.push(s.stepCount);
    }, silentLogger());
    reporter.push(sofar(1));
    await reporter.flushed();
    reporter.push(sofar(2));
    await reporter.flushed();
    expect(written).toEqual([2]);
  });
});
