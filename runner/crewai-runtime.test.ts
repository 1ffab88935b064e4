import { describe, expect, it } from "vitest";
import type { TaskOutcome } from "../core/task-assignment.ts";
import { withinOutputLimit } from "./crewai-runtime.ts";

const outcome = (fields: Partial<TaskOutcome>): TaskOutcome => ({
  taskName: "research",
  taskIndex: 0,
  agent: "Researcher",
  executionTime: 1,
  tokenUsage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
  attempt: 1,
  ...fields,
});

describe("withinOutputLimit", () => {
  it("keeps an output that fits, json_dict included", () => {
    const fits = outcome({ output: "x".repeat(500_000), jsonDict: { text: "y".repeat(500_000) } });
    expect(withinOutputLimit(fits)).toBe(fits);
  });

  it("fails an output whose json_dict takes it above 1 MiB, keeping nothing of either", () => {
    const big = withinOutputLimit(outcome({ output: "x".repeat(600_000), jsonDict: { text: "y".repeat(600_000) } }));
    expect(big).toMatchObject({ taskName: "research", error: "Task output is 1200011 bytes, above the 1 MiB limit" });
    expect(big.output).toBeUndefined();
    expect(big.jsonDict).toBeUndefined();
  });

  it("leaves a failure as it is", () => {
    const failed = outcome({ error: "The LLM returned an empty answer" });
    expect(withinOutputLimit(failed)).toBe(failed);
  });
});
