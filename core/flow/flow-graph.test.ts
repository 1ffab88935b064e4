import { describe, expect, it } from "vitest";
import { flowGraph } from "./flow-graph.ts";
import { judgeFlow } from "./problems.ts";

const expr = { call: "expression", expr: "1" };

describe("flowGraph", () => {
  it("draws completions, router outcomes and feedback outcomes as edges, with and/or joins", () => {
    const judged = judgeFlow({
      schema: "crewai.flow/v1",
      name: "G",
      methods: {
        a: { start: true, do: expr },
        b: { start: true, do: expr },
        both: { listen: { and: ["a", "b"] }, do: expr },
        route: { listen: "both", router: true, emit: ["left", "right"], do: expr },
        left_side: { listen: "left", do: expr },
        review: {
          listen: { or: ["right", "left_side"] },
          human_feedback: { message: "ok?", emit: ["yes", "no"] },
          do: expr,
        },
        done: { listen: "yes", do: { call: "each", in: "[1]", do: [{ name: "s", action: expr }] } },
      },
    });
    expect(judged.ok).toBe(true);
    const graph = flowGraph(judged.ok ? judged.definition : (undefined as never));
    expect(graph.nodes.map((n) => [n.name, n.start, n.call, n.router, n.humanFeedback])).toEqual([
      ["a", true, "expression", false, false],
      ["b", true, "expression", false, false],
      ["both", false, "expression", false, false],
      ["route", false, "expression", true, false],
      ["left_side", false, "expression", false, false],
      ["review", false, "expression", false, true],
      ["done", false, "each", false, false],
    ]);
    expect(graph.edges).toEqual([
      { from: "a", to: "both", join: "and" },
      { from: "b", to: "both", join: "and" },
      { from: "both", to: "route" },
      { from: "route", to: "left_side", outcome: "left" },
      { from: "route", to: "review", outcome: "right", join: "or" },
      { from: "left_side", to: "review", join: "or" },
      { from: "review", to: "done", outcome: "yes" },
    ]);
  });
});
