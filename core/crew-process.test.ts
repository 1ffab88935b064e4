import { describe, expect, it } from "vitest";
import { buildAssignment } from "./assignment.ts";
import { crewSpec } from "./crew-resource.ts";
import { coworkersOf, managerOf, MANAGER_NAME } from "./crew-process.ts";

const llm = { provider: "mock" as const, model: "mock" };
const agents = [
  { name: "researcher", role: "Researcher", goal: "Find facts" },
  { name: "writer", role: "Writer", goal: "Write" },
];
const tasks = [
  { name: "research", description: "Research", expectedOutput: "Facts" },
  { name: "write", description: "Write", expectedOutput: "Text", agent: "writer" },
];

function problems(spec: unknown): string[] {
  const parsed = crewSpec.safeParse(spec);
  return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
}

describe("the hierarchical process", () => {
  it("needs a manager: managerLlm or managerAgent", () => {
    expect(problems({ agents, tasks, process: "hierarchical" })).toEqual([
      "process hierarchical needs a manager: set managerLlm (a model for the manager kubecrew provides) or managerAgent",
    ]);
    expect(problems({ agents, tasks, process: "hierarchical", managerLlm: llm })).toEqual([]);
    expect(
      problems({ agents, tasks, process: "hierarchical", managerAgent: { name: "boss", role: "Boss", goal: "Lead" } }),
    ).toEqual([]);
  });

  it("refuses a manager with tools of its own, and an unknown process", () => {
    const managerAgent = { name: "boss", role: "Boss", goal: "Lead", tools: ["http_request"] };
    expect(problems({ agents, tasks, process: "hierarchical", managerAgent })).toEqual([
      'managerAgent "boss" has tools, mcps or apps: a manager has no tools of its own, it works through its coworkers (give the tools to an agent)',
    ]);
    expect(problems({ agents, tasks: [tasks[1]], process: "consensual" })).toHaveLength(1);
  });

  it("lets only a hierarchical crew's task leave its agent out", () => {
    expect(problems({ agents, tasks, llm })).toEqual([
      'task "research" names no agent: in a sequential crew every task needs one (only a hierarchical crew\'s manager chooses)',
    ]);
  });

  it("gives every task to the manager, over the task's agent or, when it names none, every agent", () => {
    const spec = crewSpec.parse({ agents, tasks, process: "hierarchical", managerLlm: llm });
    expect(managerOf(spec)).toMatchObject({ name: MANAGER_NAME, llm, allowDelegation: true, tools: [] });
    expect(coworkersOf(spec, 0).map((a) => a.name)).toEqual(["researcher", "writer"]);
    expect(coworkersOf(spec, 1).map((a) => a.name)).toEqual(["writer"]);
    const execution = { name: "e1", spec: { crewRef: { name: "c" }, inputs: {} } };
    const assignment = buildAssignment({ execution, observed: {} } as never, spec, 0);
    expect(assignment.agent.name).toBe(MANAGER_NAME);
    expect(assignment.coworkers?.map((c) => c.agent.role)).toEqual(["Researcher", "Writer"]);
  });

  it("uses the crew's own manager with its model falling back to managerLlm, then the crew's llm", () => {
    const managerAgent = { name: "boss", role: "Boss", goal: "Lead" };
    const own = crewSpec.parse({ agents, tasks, llm, process: "hierarchical", managerAgent });
    expect(managerOf(own)).toMatchObject({ name: "boss", llm });
  });
});

describe("allowDelegation in a sequential crew", () => {
  const sequential = (allowDelegation: boolean) =>
    crewSpec.parse({
      llm,
      agents: [{ ...agents[0], allowDelegation }, agents[1]],
      tasks: [{ ...tasks[0], agent: "researcher" }, tasks[1]],
    });

  it("gives an agent that may delegate every other agent as a coworker", () => {
    expect(coworkersOf(sequential(true), 0).map((a) => a.name)).toEqual(["writer"]);
    expect(coworkersOf(sequential(true), 1)).toEqual([]);
    expect(coworkersOf(sequential(false), 0)).toEqual([]);
  });
});
