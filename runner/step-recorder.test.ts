import { describe, expect, it } from "vitest";
import { MAX_STEPS_WITH_TEXT } from "../core/task-step.ts";
import { StepRecorder } from "./step-recorder.ts";

const call = (i: number) => ({
  tool: "lookup",
  input: { n: i },
  output: `answer ${i} `.repeat(30),
  startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)),
  durationMs: i,
});

describe("StepRecorder", () => {
  it("keeps every step of a long run with its metadata and summarises the oldest outputs", () => {
    const recorder = new StepRecorder();
    const count = MAX_STEPS_WITH_TEXT + 30;
    for (let i = 0; i < count; i++) recorder.toolCall(call(i));
    const { steps, stepCount, toolsUsed } = recorder.summary();
    expect(stepCount).toBe(count);
    expect(toolsUsed).toEqual(["lookup"]);
    expect(steps.map((s) => [s.index, s.tool, s.durationMs])).toEqual(
      Array.from({ length: count }, (_, i) => [i, "lookup", i]),
    );
    expect(steps[0]!.output).toMatch(/^answer 0 .* … \[summarised: 270 characters\]$/);
    expect(steps.at(-1)!.output).toBe(call(count - 1).output);
  });

  it("hands each step to onStep with the steps so far, whose positions only grow", () => {
    const seen: number[][] = [];
    const recorder = new StepRecorder((step, sofar) => {
      expect(sofar.steps.at(-1)!.index).toBe(step.index);
      seen.push(sofar.steps.map((s) => s.index));
    });
    for (let i = 0; i < 120; i++) recorder.toolCall(call(i));
    expect(seen).toHaveLength(120);
    for (const [n, indexes] of seen.entries()) expect(indexes).toEqual(Array.from({ length: n + 1 }, (_, i) => i));
  });
});
