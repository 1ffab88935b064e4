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

  it("refuses Python actions and tools kubecrew has not, and reports every problem in Ready False", () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "PyFlow",
      methods: {
        a: { start: true, do: { call: "script", code: "print(1)" } },
        b: { listen: "a", do: { call: "tool", ref: "my_project.tools:SearchTool" } },
      },
    };
    const verdict = judgeFlowResource("py", document, undefined);
    expect(verdict).toEqual({
      ok: false,
      problems: [
        expect.stringMatching(/^methods\.a\.do: call: script runs Python, which only the crewai runtime runs/),
        expect.stringMatching(/^methods\.b\.do\.ref: "my_project\.tools:SearchTool" is a Python tool class/),
      ],
    });
    const status = desiredFlowStatus(verdict, undefined, 1, "2026-11-27T00:00:00Z");
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: "Ready", status: "False", reason: "InvalidSpec" }),
    ]);
    expect(status.conditions![0]!.message).toContain("call: script");
    expect(status.conditions![0]!.message).toContain("Python tool class");
  });

  const toolFlow = {
    schema: "crewai.flow/v1",
    name: "QuoteFlow",
    methods: {
      fetch: {
        start: true,
        do: { call: "tool", ref: "http_request", with: { method: "GET", url: "${'http://' + 'quotes.test/tea'}" } },
      },
      lookup: { listen: "fetch", do: { call: "tool", ref: "https://mcp.example.com/mcp#lookup", with: { key: "k" } } },
      done: { listen: "lookup", do: { call: "expression", expr: "outputs.fetch" } },
    },
  };

  it("runs a tool method as a crew of one task calling that tool, with no model, on the annotated hosts", () => {
    const verdict = judgeFlowResource("quotes", toolFlow, {
      "kubecrew.io/allowed-hosts": "quotes.test, *.example.com:8443",
    });
    expect(verdict.ok || verdict.problems).toBe(true);
    if (!verdict.ok) return;
    const [fetch, lookup] = verdict.crews;
    expect(fetch!.metadata.name).toBe("quotes-fetch");
    expect(fetch!.spec.llm).toBeUndefined();
    expect(fetch!.spec.toolPolicy.allowedHosts).toEqual(["quotes.test", "*.example.com:8443"]);
    expect(fetch!.spec.agents).toEqual([expect.objectContaining({ tools: ["http_request"], mcps: [], apps: [] })]);
    expect(fetch!.spec.tasks).toEqual([
      expect.objectContaining({ name: "fetch", toolCall: { tool: "http_request", arguments: "{flow_input}" } }),
    ]);
    expect(fetch!.spec.inputs).toEqual([expect.objectContaining({ name: "flow_input", default: "{}" })]);
    expect(lookup!.spec.agents[0]!.mcps).toEqual(["https://mcp.example.com/mcp#lookup"]);
    expect(lookup!.spec.tasks[0]!.toolCall!.tool).toBe("lookup");
    expect(desiredFlowStatus(verdict, undefined, 1, "t").crews).toEqual(["quotes-fetch", "quotes-lookup"]);
  });

  it("names a bad allowed host, and a from_declaration path that names no Crew", () => {
    const bad = judgeFlowResource("quotes", toolFlow, { "kubecrew.io/allowed-hosts": "quotes.test,http://x/" });
    expect(bad).toEqual({
      ok: false,
      problems: [
        'metadata.annotations["kubecrew.io/allowed-hosts"]: "http://x/" is not a host name (optionally *.-prefixed and :port-suffixed)',
      ],
    });
    const declared = (path: string) => ({
      schema: "crewai.flow/v1",
      name: "F",
      methods: { a: { start: true, do: { call: "crew", from_declaration: path, inputs: { topic: "${state.t}" } } } },
    });
    const ok = judgeFlowResource("f", declared("crews/research_crew"), undefined);
    expect(ok).toMatchObject({ ok: true, crews: [], declared: [{ at: "methods.a.do", crew: "research-crew" }] });
    expect(judgeFlowResource("f", declared("___"), undefined)).toEqual({
      ok: false,
      problems: ['methods.a.do.from_declaration: "___" names no Crew (no DNS label can be made of it)'],
    });
  });
});
