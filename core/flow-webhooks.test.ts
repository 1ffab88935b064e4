import { describe, expect, it } from "vitest";
import {
  dueFlowWebhooks,
  FLOW_HOOK,
  methodHook,
  type FlowMethodStep,
  type FlowRunForWebhooks,
} from "./flow-webhooks.ts";

const urls = { task: "https://hooks.example/method", crew: "https://hooks.example/flow" };

function run(over: Partial<FlowRunForWebhooks> = {}): FlowRunForWebhooks {
  return {
    id: "k1",
    flow: "review",
    phase: "Running",
    methods: [
      {
        id: "outline#1",
        method: "outline",
        phase: "Succeeded",
        startTime: "2026-11-27T06:00:00.000Z",
        completionTime: "2026-11-27T06:00:01.500Z",
      },
      { id: "check#1", method: "check", phase: "Succeeded", startTime: "2026-11-27T06:00:02Z", outcome: "long" },
      { id: "write#1", method: "write", phase: "Running", startTime: "2026-11-27T06:00:03Z" },
    ],
    outputs: { outline: ["a", "b"], check: { raw: "long" } },
    executionTime: 0,
    meta: { ticket: 7 },
    webhooks: urls,
    ...over,
  };
}
const outputs: Record<string, unknown> = { "outline#1": ["a", "b"], "check#1": { raw: "long" } };
const outputOf = (id: string) => outputs[id] as never;

describe("dueFlowWebhooks", () => {
  it("is due once per completed method run, with its method, output and outcome, until recorded", () => {
    const due = dueFlowWebhooks(run(), outputOf, new Set());
    expect(due.map((d) => [d.hook, d.kind, d.url])).toEqual([
      ["method:outline#1", "method", urls.task],
      ["method:check#1", "method", urls.task],
    ]);
    expect(due[0]!.payload).toEqual({
      kickoff_id: "k1",
      flow: "review",
      task_id: "outline",
      name: "outline",
      method: "outline",
      activation: "outline#1",
      output: '["a","b"]',
      json_dict: ["a", "b"],
      execution_time: 1.5,
      meta: { ticket: 7 },
    });
    expect(due[1]!.payload).toMatchObject({ output: "long", outcome: "long", json_dict: { raw: "long" } });
    expect(dueFlowWebhooks(run(), outputOf, new Set([methodHook("outline#1")])).map((d) => d.hook)).toEqual([
      "method:check#1",
    ]);
  });

  it("waits for a method's output before its webhook", () => {
    expect(dueFlowWebhooks(run(), () => undefined, new Set())).toEqual([]);
  });

  it("sends the flow webhook once the run ended: the final output and every output, or the error", () => {
    const done = new Set([methodHook("outline#1"), methodHook("check#1")]);
    expect(dueFlowWebhooks(run(), outputOf, done)).toEqual([]);
    const succeeded = dueFlowWebhooks(
      run({ phase: "Succeeded", result: { raw: "long" }, executionTime: 4.25 }),
      outputOf,
      done,
    );
    expect(succeeded).toEqual([
      {
        type: "webhook",
        hook: FLOW_HOOK,
        kind: "flow",
        url: urls.crew,
        payload: {
          kickoff_id: "k1",
          flow: "review",
          status: "completed",
          result: "long",
          outputs: { outline: ["a", "b"], check: { raw: "long" } },
          error: null,
          execution_time: 4.25,
          meta: { ticket: 7 },
        },
      },
    ]);
    const failed = dueFlowWebhooks(run({ phase: "Failed", error: "methods.write: boom" }), outputOf, done);
    expect(failed[0]!.payload).toMatchObject({ status: "error", result: null, error: "methods.write: boom" });
    expect(dueFlowWebhooks(run({ phase: "Stopped" }), outputOf, new Set([...done, FLOW_HOOK]))).toEqual([]);
  });

  it("sends nothing without URLs, and only the kind a URL was given for", () => {
    expect(dueFlowWebhooks(run({ webhooks: undefined, phase: "Succeeded" }), outputOf, new Set())).toEqual([]);
    const onlyFlow = dueFlowWebhooks(run({ webhooks: { crew: urls.crew }, phase: "Failed" }), outputOf, new Set());
    expect(onlyFlow.map((d) => d.hook)).toEqual([FLOW_HOOK]);
  });

  describe("step webhooks", () => {
    const stepUrl = "https://hooks.example/step";
    const step = (activation: string, place: string, attempt: number, index: number): FlowMethodStep => ({
      activation,
      place,
      attempt,
      index,
      step: { index, kind: "llm", output: `${place} ${attempt}.${index}`, started_at: "2026-11-27T06:00:03Z" },
    });
    // write#1 is an each: two items, each a child execution of its own; outline#1 an agent whose first attempt failed.
    const steps = [
      step("write#1", "c2/write", 1, 1),
      step("write#1", "c1/write", 1, 0),
      step("write#1", "c2/write", 1, 0),
      step("outline#1", "c0/outline", 2, 0),
      step("outline#1", "c0/outline", 1, 1),
      step("outline#1", "c0/outline", 1, 0),
    ];
    const due = (delivered: string[]) =>
      dueFlowWebhooks(run({ webhooks: { step: stepUrl }, steps }), outputOf, new Set(delivered));

    it("sends each place's steps in order, one at a time, as a crew's step with the method as its task", () => {
      expect(due([]).map((d) => d.hook)).toEqual([
        "step:write#1:c2/write:1:0",
        "step:write#1:c1/write:1:0",
        "step:outline#1:c0/outline:1:0",
      ]);
      expect(due([]).at(-1)).toEqual({
        type: "webhook",
        hook: "step:outline#1:c0/outline:1:0",
        kind: "step",
        url: stepUrl,
        payload: {
          kickoff_id: "k1",
          flow: "review",
          task_id: "outline",
          method: "outline",
          activation: "outline#1",
          attempt: 1,
          step: steps[5]!.step,
          meta: { ticket: 7 },
        },
      });
      const outline = (delivered: string[]) =>
        due(delivered)
          .filter((d) => d.hook.startsWith("step:outline"))
          .map((d) => d.hook);
      expect(outline(["step:outline#1:c0/outline:1:0"])).toEqual(["step:outline#1:c0/outline:1:1"]);
      expect(outline(["step:outline#1:c0/outline:1:0", "step:outline#1:c0/outline:1:1"])).toEqual([
        "step:outline#1:c0/outline:2:0",
      ]);
      expect(
        outline(["step:outline#1:c0/outline:1:0", "step:outline#1:c0/outline:1:1", "step:outline#1:c0/outline:2:0"]),
      ).toEqual([]);
    });

    it("sends no steps without a step URL, nor steps of a method run the run does not list", () => {
      expect(dueFlowWebhooks(run({ steps }), outputOf, new Set(["method:outline#1", "method:check#1"]))).toEqual([]);
      const stray = [step("gone#1", "c9/gone", 1, 0)];
      expect(dueFlowWebhooks(run({ webhooks: { step: stepUrl }, steps: stray }), outputOf, new Set())).toEqual([]);
    });
  });
});
