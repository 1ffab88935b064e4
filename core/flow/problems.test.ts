import { describe, expect, it } from "vitest";
import { judgeFlow } from "./problems.ts";

const ok = {
  name: "f",
  methods: {
    seed: { start: true, do: { call: "expression", expr: "state.topic" } },
    route: {
      listen: "seed",
      router: true,
      emit: ["long", "short"],
      do: { call: "expression", expr: "size(outputs.seed) > 10 ? 'long' : 'short'" },
    },
    write: {
      listen: { or: ["long", "short"] },
      do: { call: "agent", with: { role: "r", goal: "g", backstory: "b", input: "Topic: ${outputs.seed}" } },
    },
  },
};

function problemsOf(change: (flow: typeof ok & Record<string, unknown>) => void): string[] {
  const flow = structuredClone(ok) as typeof ok & Record<string, unknown>;
  change(flow);
  const judged = judgeFlow(flow);
  return judged.ok ? [] : judged.problems;
}

describe("judgeFlow", () => {
  it("accepts a flow whose names and expressions all resolve", () => {
    expect(judgeFlow(ok)).toMatchObject({ ok: true, definition: { schema: "crewai.flow/v1" } });
  });

  it("names each problem where it is", () => {
    expect(problemsOf((f) => (f.methods.write.listen = { or: ["long", "medium"] }))).toEqual([
      'methods.write.listen: "medium" names no method and no router outcome',
    ]);
    expect(problemsOf((f) => delete (f.methods.route as { emit?: string[] }).emit)).toEqual([
      "methods.route.emit: a router must list the outcomes it may emit",
      'methods.write.listen: "long" names no method and no router outcome',
      'methods.write.listen: "short" names no method and no router outcome',
    ]);
    expect(problemsOf((f) => (f.methods.seed.start = false))).toEqual([
      "methods: no method is a start method (start: true)",
      "methods.seed: neither a start method nor a listener; it would never run",
    ]);
    expect(problemsOf((f) => (f.methods.seed.do.expr = "state.topic +"))[0]).toMatch(/^methods\.seed\.do\.expr: /);
    expect(problemsOf((f) => (f.methods.write.do.with.input = "${outputs.nothing}"))).toEqual([
      'methods.write.do.with.input: outputs.nothing names no method (in "outputs.nothing")',
    ]);
    expect(problemsOf((f) => (f.methods.seed.do.expr = "secrets.key"))).toEqual([
      'methods.seed.do.expr: reads "secrets"; it may read only state, outputs (in "secrets.key")',
    ]);
    expect(problemsOf((f) => (f.methods.route.listen = "route"))).toEqual([
      'methods.route.listen: "route" is the method itself; it would trigger itself without end',
    ]);
  });

  it("reads item and earlier steps' outputs inside an each", () => {
    const each = (steps: object[]) =>
      problemsOf((f) => ((f.methods.seed as { do: object }).do = { call: "each", in: "state.rows", do: steps }));
    expect(
      each([
        { name: "clean", action: { call: "expression", expr: "item.trim()" } },
        { name: "tag", if: "outputs.clean != ''", action: { call: "expression", expr: "outputs.clean" } },
      ]),
    ).toEqual([]);
    expect(each([{ name: "a", action: { call: "expression", expr: "outputs.b" } }])).toEqual([
      'methods.seed.do.do[0].action.expr: outputs.b names no method (in "outputs.b")',
    ]);
  });

  it("refuses what is not the crewai.flow/v1 shape", () => {
    expect(problemsOf((f) => (f.schema = "crewai.flow/v2"))[0]).toMatch(/^schema: /);
    expect(problemsOf((f) => ((f.methods.seed.do as { call: string }).call = "shell"))[0]).toMatch(
      /^methods\.seed\.do/,
    );
  });
});
