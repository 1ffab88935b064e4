import { describe, expect, it } from "vitest";
import { desiredFlowStatus, judgeFlowResource } from "./flow-verdict.ts";

const agentFlow = (llm?: string) => ({
  schema: "crewai.flow/v1",
  name: "NoteFlow",
  state: { type: "json_schema", json_schema: { type: "object", properties: { topic: { type: "string" } } } },
  methods: {
    note: {
      start: true,
      do: {
        call: "agent",
        with: { role: "Writer", goal: "Note", backstory: "Brief.", input: "${state.topic}", ...(llm ? { llm } : {}) },
      },
    },
    done: { listen: "note", do: { call: "expression", expr: "outputs.note.raw" } },
  },
});
const annotation = (llm: unknown) => ({ "kubecrew.io/llm": JSON.stringify(llm) });

describe("a Flow resource judged", () => {
  it("is ready with the Crews its agent methods run, on the annotated model", () => {
    const verdict = judgeFlowResource("notes", agentFlow(), annotation({ provider: "mock", model: "m" }));
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(verdict.crews.map((c) => [c.metadata.name, c.spec.llm])).toEqual([
      ["notes-note", { provider: "mock", model: "m" }],
    ]);
    const status = desiredFlowStatus(verdict, undefined, 3, "2026-11-27T00:00:00Z");
    expect(status).toMatchObject({
      observedGeneration: 3,
      methodCount: 2,
      startMethods: ["note"],
      inputs: ["topic"],
      crews: ["notes-note"],
      conditions: [{ type: "Ready", status: "True", reason: "Valid", observedGeneration: 3 }],
    });
  });

  it("names an agent with no model, and an annotation that is not an LLM setting", () => {
    expect(judgeFlowResource("notes", agentFlow(), undefined)).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^crew notes-note: names no model; .*kubecrew\.io\/llm$/)],
    });
    const broken = judgeFlowResource("notes", agentFlow(), { "kubecrew.io/llm": "{provider" });
    expect(broken).toEqual({ ok: false, problems: ['metadata.annotations["kubecrew.io/llm"]: not JSON'] });
    const unknown = judgeFlowResource("notes", agentFlow(), annotation({ provider: "nobody", model: "m" }));
    expect(unknown.ok || unknown.problems[0]).toMatch(/^metadata\.annotations\["kubecrew\.io\/llm"\]: provider/);
  });

  it("refuses Python and tool actions, and reports every problem in Ready False", () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "PyFlow",
      methods: {
        a: { start: true, do: { call: "script", code: "print(1)" } },
        b: { listen: "a", do: { call: "tool", ref: "search" } },
      },
    };
    const verdict = judgeFlowResource("py", document, undefined);
    expect(verdict).toEqual({
      ok: false,
      problems: [
        expect.stringMatching(/^methods\.a\.do: call: script runs Python, which only the crewai runtime runs/),
        expect.stringMatching(/^methods\.b\.do: call: tool \(search\) is not run yet/),
      ],
    });
    const status = desiredFlowStatus(verdict, undefined, 1, "2026-11-27T00:00:00Z");
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: "Ready", status: "False", reason: "InvalidSpec" }),
    ]);
    expect(status.conditions![0]!.message).toContain("call: script");
    expect(status.conditions![0]!.message).toContain("call: tool");
  });
});
