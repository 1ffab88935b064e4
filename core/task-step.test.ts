import { describe, expect, it } from "vitest";
import {
  boundSteps,
  cutText,
  MAX_STEP_TEXT_CHARS,
  MAX_STEPS_TEXT_CHARS,
  MAX_STORED_STEPS,
  SUMMARY_CHARS,
  type TaskStep,
} from "./task-step.ts";

const step = (index: number, output: string): TaskStep => ({
  index,
  kind: "tool",
  tool: "search",
  input: '{"q":"x"}',
  output,
  startedAt: "2026-01-01T00:00:00.000Z",
  durationMs: 3,
});

describe("cutText", () => {
  it("keeps short text and cuts long text to the bound with a marker", () => {
    expect(cutText("abc", 10)).toBe("abc");
    const cut = cutText("x".repeat(100), 40);
    expect(cut).toHaveLength(40);
    expect(cut).toMatch(/^x+ … \[\d+ more characters\]$/);
  });
});

describe("boundSteps", () => {
  it("keeps small steps as they are", () => {
    const steps = [step(0, "a"), step(1, "b")];
    expect(boundSteps(steps)).toEqual(steps);
  });

  it("cuts each text, keeps the first steps, and summarises the oldest when over the budget", () => {
    const steps = Array.from({ length: MAX_STORED_STEPS + 20 }, (_, i) => step(i, "o".repeat(10_000)));
    const bounded = boundSteps(steps);
    expect(bounded).toHaveLength(MAX_STORED_STEPS);
    expect(bounded[0]!.index).toBe(0);
    expect(bounded.at(-1)!.index).toBe(MAX_STORED_STEPS - 1);
    const total = bounded.reduce((sum, s) => sum + s.input!.length + s.output!.length, 0);
    expect(total).toBeLessThanOrEqual(MAX_STEPS_TEXT_CHARS);
    expect(bounded[0]!.output).toHaveLength(SUMMARY_CHARS);
    expect(bounded.at(-1)!.output).toHaveLength(MAX_STEP_TEXT_CHARS);
    expect(steps[0]!.output).toHaveLength(10_000); // the input is not changed
  });
});
