import { describe, expect, it } from "vitest";
import { decideFlow, initialFlowState, type FlowDecision, type FlowEvent } from "./decide-flow.ts";
import { flowDefinition, type FlowDefinition } from "./definition.ts";

const expr = { call: "expression", expr: "1" };
function flow(methods: Record<string, object>, config?: object): FlowDefinition {
  const entries = Object.entries(methods).map(([name, m]) => [name, { do: expr, ...m }]);
  return flowDefinition.parse({ name: "t", methods: Object.fromEntries(entries), ...(config ? { config } : {}) });
}

/** Runs the flow to its end, each method ending with the outcome `outcomes` gives (in order per method). */
function runAll(definition: FlowDefinition, outcomes: Record<string, string[]> = {}) {
  let decision: FlowDecision = decideFlow(definition, initialFlowState(), { type: "kickoff" });
  const order: string[] = [];
  const queue = [...decision.start];
  while (queue.length && !decision.end?.phase.startsWith("F")) {
    const activation = queue.shift()!;
    order.push(activation.method);
    const outcome = outcomes[activation.method]?.shift();
    const event: FlowEvent = { type: "completed", activation: activation.id, ...(outcome ? { outcome } : {}) };
    decision = decideFlow(definition, decision.state, event);
    queue.push(...decision.start);
  }
  return { order, end: decision.end, state: decision.state };
}

describe("decideFlow", () => {
  it("starts every start method at kickoff and ends when nothing runs", () => {
    const definition = flow({ a: { start: true }, b: { start: true }, c: { listen: "a" } });
    const kickoff = decideFlow(definition, initialFlowState(), { type: "kickoff" });
    expect(kickoff.start.map((a) => a.id)).toEqual(["a#1", "b#1"]);
    expect(kickoff.end).toBeUndefined();
    expect(runAll(definition)).toMatchObject({ order: ["a", "b", "c"], end: { phase: "Succeeded" } });
  });

  it("runs an and listener once it has seen every event, an or listener on the first", () => {
    const definition = flow({
      a: { start: true },
      b: { start: true },
      both: { listen: { and: ["a", "b"] } },
      either: { listen: { or: ["a", "b"] } },
    });
    const kickoff = decideFlow(definition, initialFlowState(), { type: "kickoff" });
    const afterA = decideFlow(definition, kickoff.state, { type: "completed", activation: "a#1" });
    expect(afterA.start.map((a) => a.method)).toEqual(["either"]);
    const afterB = decideFlow(definition, afterA.state, { type: "completed", activation: "b#1" });
    expect(afterB.start.map((a) => a.method)).toEqual(["both"]);
  });

  it("follows a router's outcome and runs the event's other listeners after the router", () => {
    const definition = flow({
      a: { start: true },
      route: { listen: "a", router: true, emit: ["yes", "no"] },
      also: { listen: "a" },
      onYes: { listen: "yes" },
      onNo: { listen: "no" },
    });
    const kickoff = decideFlow(definition, initialFlowState(), { type: "kickoff" });
    const afterA = decideFlow(definition, kickoff.state, { type: "completed", activation: "a#1" });
    expect(afterA.start.map((a) => a.method)).toEqual(["route"]);
    const afterRoute = decideFlow(definition, afterA.state, {
      type: "completed",
      activation: "route#1",
      outcome: "no",
    });
    expect(afterRoute.start.map((a) => a.method)).toEqual(["also", "onNo"]);
    expect(afterRoute.state.outcomes).toEqual([{ method: "route", outcome: "no" }]);
  });

  it("treats human_feedback with emit as a router", () => {
    const definition = flow({
      draft: { start: true, human_feedback: { message: "ok?", emit: ["approved", "rejected"] } },
      publish: { listen: "approved" },
      discard: { listen: "rejected" },
    });
    expect(runAll(definition, { draft: ["rejected"] }).order).toEqual(["draft", "discard"]);
  });

  it("loops through a router until max_method_calls, then fails naming the method", () => {
    const definition = flow(
      {
        begin: { start: true },
        work: { listen: { or: ["begin", "again"] } },
        check: { listen: "work", router: true, emit: ["again", "done"] },
      },
      { max_method_calls: 3 },
    );
    const bounded = runAll(definition, { check: ["again", "again", "again", "again"] });
    expect(bounded.order).toEqual(["begin", "work", "check", "work", "check", "work", "check"]);
    expect(bounded.end).toMatchObject({ phase: "Failed", error: expect.stringContaining('"work" would run 4 times') });
    const ends = runAll(definition, { check: ["again", "done"] });
    expect(ends).toMatchObject({ order: ["begin", "work", "check", "work", "check"], end: { phase: "Succeeded" } });
  });

  it("runs a conditional start when a router emits what it waits for", () => {
    const definition = flow({
      a: { start: true, router: true, emit: ["retry", "stop"] },
      b: { start: "retry" },
    });
    expect(runAll(definition, { a: ["retry"] }).order).toEqual(["a", "b"]);
    expect(runAll(definition, { a: ["stop"] }).order).toEqual(["a"]);
  });

  it("fails the run when a method fails, and counts a completion told twice once", () => {
    const definition = flow({ a: { start: true }, b: { listen: "a" } });
    const kickoff = decideFlow(definition, initialFlowState(), { type: "kickoff" });
    const once = decideFlow(definition, kickoff.state, { type: "completed", activation: "a#1" });
    const twice = decideFlow(definition, once.state, { type: "completed", activation: "a#1" });
    expect(twice.start).toEqual([]);
    expect(twice.state).toEqual(once.state);
    const failed = decideFlow(definition, once.state, { type: "failed", activation: "b#1", error: "boom" });
    expect(failed.end).toEqual({ phase: "Failed", error: "boom" });
  });
});
