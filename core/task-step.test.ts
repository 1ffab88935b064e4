import { describe, expect, it } from "vitest";
import {
  boundSteps,
  cutText,
  MAX_STEP_TEXT_CHARS,
  MAX_STEPS_TEXT_CHARS,
  MAX_STEPS_WITH_TEXT,
  MAX_STORED_STEPS,
  originalLength,
  summarise,
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

  it("cuts each text and, over the size budget, summarises the oldest to a marker with the original size", () => {
    const steps = Array.from({ length: 60 }, (_, i) => step(i, "o".repeat(10_000)));
    const bounded = boundSteps(steps);
    expect(bounded.map((s) => s.index)).toEqual(steps.map((s) => s.index));
    const total = bounded.reduce((sum, s) => sum + s.input!.length + s.output!.length, 0);
    expect(total).toBeLessThanOrEqual(MAX_STEPS_TEXT_CHARS);
    expect(bounded[0]!.output).toMatch(/^o+ … \[summarised: 10000 characters\]$/);
    expect(bounded[0]!.output!.length).toBeLessThanOrEqual(SUMMARY_CHARS);
    expect(bounded[0]!.input).toBe('{"q":"x"}'); // short texts stay as they are
    expect(bounded.at(-1)!.output).toHaveLength(MAX_STEP_TEXT_CHARS);
    expect(originalLength(bounded.at(-1)!.output!)).toBe(10_000);
    expect(steps[0]!.output).toHaveLength(10_000); // the input is not changed
  });

  it("keeps every step's metadata past the count bound and summarises the oldest steps' texts", () => {
    const count = MAX_STEPS_WITH_TEXT + 50;
    const steps = Array.from({ length: count }, (_, i) => ({ ...step(i, `result ${i} `.repeat(20)), durationMs: i }));
    const bounded = boundSteps(steps);
    expect(bounded).toHaveLength(count);
    for (const [i, s] of bounded.entries()) {
      expect({ index: s.index, kind: s.kind, tool: s.tool, durationMs: s.durationMs, startedAt: s.startedAt }).toEqual({
        index: i,
        kind: "tool",
        tool: "search",
        durationMs: i,
        startedAt: "2026-01-01T00:00:00.000Z",
      });
    }
    const full = steps[0]!.output!;
    expect(bounded[0]!.output).toBe(
      `${full.slice(0, bounded[0]!.output!.indexOf(" … "))} … [summarised: ${full.length} characters]`,
    );
    expect(bounded[49]!.output).toMatch(/ … \[summarised: \d+ characters\]$/);
    expect(bounded.slice(50).map((s) => s.output)).toEqual(steps.slice(50).map((s) => s.output));
  });

  it("stores at most MAX_STORED_STEPS steps, the first ones", () => {
    const steps = Array.from({ length: MAX_STORED_STEPS + 20 }, (_, i) => step(i, "x"));
    const bounded = boundSteps(steps);
    expect(bounded).toHaveLength(MAX_STORED_STEPS);
    expect(bounded.at(-1)!.index).toBe(MAX_STORED_STEPS - 1);
  });

  it("never moves a step: bounding a longer run keeps each earlier step at its position", () => {
    const steps = Array.from({ length: MAX_STORED_STEPS + 5 }, (_, i) => step(i, "y".repeat(3_000)));
    let previous: number[] = [];
    for (const n of [1, 50, 99, 100, 101, 150, 300, MAX_STORED_STEPS, MAX_STORED_STEPS + 5]) {
      const indexes = boundSteps(steps.slice(0, n)).map((s) => s.index);
      expect(indexes.slice(0, previous.length)).toEqual(previous);
      expect(indexes).toEqual(indexes.map((_, i) => i));
      previous = indexes;
    }
  });
});

describe("summarise", () => {
  it("names the original size, also of a text cutText already cut", () => {
    expect(summarise("short")).toBe("short");
    const cut = cutText("z".repeat(9_999), MAX_STEP_TEXT_CHARS);
    expect(originalLength(cut)).toBe(9_999);
    const summary = summarise(cut);
    expect(summary).toMatch(/^z+ … \[summarised: 9999 characters\]$/);
    expect(summary.length).toBeLessThanOrEqual(SUMMARY_CHARS);
    expect(summarise(summary)).toBe(summary);
    expect(originalLength(summary)).toBe(9_999);
  });
});
