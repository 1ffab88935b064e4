import { describe, expect, it } from "vitest";
import { flowMethod } from "./definition.ts";
import { feedbackOutcome, routerOutcome } from "./outcomes.ts";

const review = flowMethod.parse({
  listen: "draft",
  human_feedback: { message: "ok?", emit: ["approved", "needs_changes"], default_outcome: "needs_changes" },
  do: { call: "expression", expr: "1" },
});

describe("feedbackOutcome", () => {
  it("takes default_outcome when the person says nothing, the named outcome otherwise", () => {
    expect(feedbackOutcome(review, "  ")).toBe("needs_changes");
    expect(feedbackOutcome(review, "APPROVED")).toBe("approved");
    expect(feedbackOutcome(review, "this needs_changes in the intro")).toBe("needs_changes");
    expect(feedbackOutcome(review, "looks fine")).toBe("approved");
  });
});

describe("routerOutcome", () => {
  const router = flowMethod.parse({
    listen: "a",
    router: true,
    emit: ["yes", "no"],
    do: { call: "agent", with: { role: "r", goal: "g", backstory: "b", input: "x" } },
  });
  it("is the agent's answer, or its first outcome on the mock provider", () => {
    expect(routerOutcome(router, { raw: " no\n" }, false)).toBe("no");
    expect(routerOutcome(router, { raw: "[mock llm] Answer" }, true)).toBe("yes");
  });
});
