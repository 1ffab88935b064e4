import { asSchema } from "ai";
import { describe, expect, it } from "vitest";
import { localPolicy } from "../core/outbound/policy.ts";
import type { TaskStep } from "../core/task-step.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import {
  ASK_COWORKER_TOOL,
  DELEGATE_WORK_TOOL,
  delegationTools,
  findCoworker,
  type Coworker,
  type DelegatedRequest,
  type DelegationRecord,
} from "./delegation-tools.ts";
import { DEFAULT_RETRY_POLICY } from "./retry.ts";
import { runTask } from "./run-task.ts";
import { testAssignment } from "./test-assignment.ts";

const base = testAssignment().agent;
const coworker = (name: string, role: string, model = "echo"): Coworker => ({
  agent: { ...base, name, role, goal: `Be a good ${role}`, llm: { provider: "mock", model } },
  tools: { mcpServers: [], allowedHosts: [] },
});
const researcher = coworker("researcher", "Senior Researcher");
const analyst = coworker("analyst", "Data Analyst");
const toolOptions = { toolCallId: "c1", messages: [] };

type Executable = { execute: (input: unknown, options: typeof toolOptions) => Promise<string> };

describe("delegationTools", () => {
  it("offers no tool when there is no one to delegate to", () => {
    expect(delegationTools([], { runCoworker: async () => "" })).toEqual({});
  });

  it("offers delegate and ask, whose coworker argument takes exactly the coworkers' roles", async () => {
    const tools = delegationTools([researcher, analyst], { runCoworker: async () => "" });
    expect(Object.keys(tools).sort()).toEqual([ASK_COWORKER_TOOL, DELEGATE_WORK_TOOL].sort());
    for (const name of [DELEGATE_WORK_TOOL, ASK_COWORKER_TOOL]) {
      const schema = (await asSchema(tools[name]!.inputSchema).jsonSchema) as {
        properties: { coworker: { enum: string[] } };
        required: string[];
      };
      expect(schema.properties.coworker.enum).toEqual(["Senior Researcher", "Data Analyst"]);
      expect(schema.required).toContain("coworker");
    }
  });

  it("runs the named coworker with the work and context, returns its answer and records the delegation", async () => {
    const calls: [string, DelegatedRequest][] = [];
    const records: DelegationRecord[] = [];
    const tools = delegationTools([researcher, analyst], {
      runCoworker: async (c, request) => {
        calls.push([c.agent.name, request]);
        return `done by ${c.agent.role}`;
      },
      onDelegation: (r) => records.push(r),
    });
    const answer = await (tools[DELEGATE_WORK_TOOL] as unknown as Executable).execute(
      { coworker: "Data Analyst", task: "Count the sources", context: "Three sources were found" },
      toolOptions,
    );
    expect(answer).toBe("done by Data Analyst");
    expect(calls).toEqual([
      ["analyst", { kind: "work", text: "Count the sources", context: "Three sources were found" }],
    ]);
    expect(records).toMatchObject([
      {
        tool: DELEGATE_WORK_TOOL,
        coworker: "Data Analyst",
        request: "Count the sources",
        answer: "done by Data Analyst",
      },
    ]);
    await (tools[ASK_COWORKER_TOOL] as unknown as Executable).execute(
      { coworker: "Senior Researcher", question: "Which source is best?", context: "" },
      toolOptions,
    );
    expect(calls[1]).toEqual(["researcher", { kind: "question", text: "Which source is best?", context: "" }]);
  });

  it("tells the delegating agent when the coworker fails, and records why", async () => {
    const records: DelegationRecord[] = [];
    const tools = delegationTools([researcher], {
      runCoworker: async () => {
        throw new Error("the coworker's model is down");
      },
      onDelegation: (r) => records.push(r),
    });
    const answer = await (tools[DELEGATE_WORK_TOOL] as unknown as Executable).execute(
      { coworker: "Senior Researcher", task: "Find sources", context: "" },
      toolOptions,
    );
    expect(answer).toBe("The delegation failed: the coworker's model is down");
    expect(records[0]).toMatchObject({ coworker: "Senior Researcher", error: "the coworker's model is down" });
    expect(records[0]!.answer).toBeUndefined();
  });

  it("finds a coworker whatever the case and spacing of the role", () => {
    expect(findCoworker([researcher, analyst], "  data   ANALYST ")?.agent.name).toBe("analyst");
    expect(findCoworker([researcher, analyst], "Editor")).toBeUndefined();
  });
});

describe("runTask with coworkers (mock provider)", () => {
  const deps = {
    env: {},
    fetch: createOutboundClient(localPolicy).fetch,
    retry: { ...DEFAULT_RETRY_POLICY, initialDelayMs: 1, maxDelayMs: 2 },
  };

  it("the manager delegates to its first coworker, whose run gets the task and whose answer comes back", async () => {
    const steps: TaskStep[] = [];
    const outcome = await runTask(testAssignment({ coworkers: [researcher, analyst] }), {
      ...deps,
      onStep: (s) => steps.push(s),
    });
    expect(outcome.error).toBeUndefined();
    const delegation = steps.find((s) => s.kind === "delegation");
    expect(delegation).toMatchObject({
      tool: DELEGATE_WORK_TOOL,
      coworker: "Senior Researcher",
      input: "Write a short article about AI agents.",
    });
    // The coworker's model echoes its prompt: its role and the work handed over reached its LLM call.
    expect(delegation!.output).toContain("Role: Senior Researcher");
    expect(delegation!.output).toContain("Task: Write a short article about AI agents.");
    expect(outcome.output).toContain("Role: Senior Researcher");
    expect(steps.map((s) => s.kind)).toEqual(["llm", "llm", "delegation", "llm"]);
    expect(outcome.stepCount).toBe(4);
  });

  it("without coworkers the agent is offered no delegation tool", async () => {
    const steps: TaskStep[] = [];
    const outcome = await runTask(testAssignment(), { ...deps, onStep: (s) => steps.push(s) });
    expect(outcome.error).toBeUndefined();
    expect(steps.map((s) => s.kind)).toEqual(["llm"]);
  });
});
