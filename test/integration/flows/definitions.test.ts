import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { judgeFlow } from "../../../core/flow/problems.ts";
import { crewaiCreatedFlow, crewaiExampleFlow, crewaiValidates, type Refusal } from "../../support/crewai-flow.ts";
import { refusedCases, runnableCases, stricterCases, toolCases } from "./flow-cases.ts";

// kubecrew's judgement of crewai.flow/v1 documents against CrewAI's own FlowDefinition (the installed package): what
// kubecrew accepts CrewAI accepts; what CrewAI refuses kubecrew refuses, naming where.
let example: unknown;
let created: unknown;
let verdicts: Refusal[];

beforeAll(async () => {
  example = parse(crewaiExampleFlow());
  created = parse(crewaiCreatedFlow("my_flow"));
  verdicts = await crewaiValidates([
    example,
    created,
    ...runnableCases.map((c) => c.definition),
    ...refusedCases.map((c) => c.definition),
    ...toolCases.map((c) => c.definition),
  ]);
}, 240_000);

const verdictOf = (definition: unknown): Refusal =>
  verdicts[
    [
      example,
      created,
      ...runnableCases.map((c) => c.definition),
      ...refusedCases.map((c) => c.definition),
      ...toolCases.map((c) => c.definition),
    ].indexOf(definition)
  ]!;

describe("definitions kubecrew accepts", () => {
  it("accepts CrewAI's own example flow, which CrewAI accepts", () => {
    expect(verdictOf(example)).toEqual({ ok: true });
    const judged = judgeFlow(example);
    expect(judged.ok ? [] : judged.problems).toEqual([]);
  });

  it("accepts the flow `crewai create flow --declarative` writes, which CrewAI accepts", () => {
    expect(verdictOf(created)).toEqual({ ok: true });
    const judged = judgeFlow(created);
    expect(judged.ok ? [] : judged.problems).toEqual([]);
  });

  it.each(runnableCases)("$name: kubecrew and CrewAI both accept it", ({ definition }) => {
    const judged = judgeFlow(definition);
    expect(judged.ok ? [] : judged.problems).toEqual([]);
    expect(verdictOf(definition)).toEqual({ ok: true });
  });
});

describe("kubecrew's tool refs and crews from declarations", () => {
  it.each(toolCases)("$name: kubecrew and CrewAI both accept it", ({ definition }) => {
    const judged = judgeFlow(definition);
    expect(judged.ok ? [] : judged.problems).toEqual([]);
    expect(verdictOf(definition)).toEqual({ ok: true });
  });
});

describe("definitions CrewAI refuses", () => {
  it.each(refusedCases)("$name: refused by both, kubecrew naming $at", ({ definition, at }) => {
    const crewai = verdictOf(definition);
    expect(crewai.ok).toBe(false);
    const judged = judgeFlow(definition);
    expect(judged.ok).toBe(false);
    if (!judged.ok) expect(judged.problems.some((p) => p.startsWith(at))).toBe(true);
  });
});

describe("definitions kubecrew refuses on apply though CrewAI loads them", () => {
  it.each(stricterCases)("$name: refused, naming $at", ({ definition, at }) => {
    const judged = judgeFlow(definition);
    expect(judged.ok).toBe(false);
    if (!judged.ok) expect(judged.problems.some((p) => p.startsWith(at))).toBe(true);
  });
});
