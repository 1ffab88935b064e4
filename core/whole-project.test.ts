import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpecProblems } from "./crew-problems.ts";
import { crewSpec } from "./crew-resource.ts";
import { decide } from "./decide.ts";
import { runsWhole } from "./whole-project.ts";
import type { Action, DecideInput } from "./decision.ts";
import { executionSpec, type ExecutionStatus } from "./execution.ts";
import type { ObservedTask } from "./observed-task.ts";
import type { TaskResultSpec } from "./task-result.ts";

// decide() for a crew whose CrewAI project runs whole (spec.runner.crew): one run for the execution, started as the
// first task's, every task's result recorded as it arrives, stop and failures aimed at that one run.

const ID = "5f0c7a3e-2b1d-4e8f-9a6c-1d2e3f4a5b6c";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);

const crew: CrewSpec = crewSpec.parse({
  runtime: "crewai",
  llm: { provider: "openai", model: "gpt-4o-mini", apiKeySecretRef: { name: "llm", key: "key" } },
  agents: [{ name: "researcher", role: "Researcher", goal: "Find" }],
  tasks: [
    { name: "research_task", agent: "researcher", description: "Research", expectedOutput: "R" },
    { name: "reporting_task", agent: "researcher", description: "Report", expectedOutput: "P", context: [] },
    { name: "summary_task", agent: "researcher", description: "Sum", expectedOutput: "S", context: ["research_task"] },
  ],
  runner: { crew: "demo.crew:Demo", taskTimeoutSeconds: 60, executionTimeoutSeconds: 300 },
});

function input(
  observed: Record<string, ObservedTask>,
  status?: ExecutionStatus,
  now = at(0),
  stop = false,
): DecideInput {
  return {
    execution: {
      name: ID,
      namespace: "team-a",
      uid: "uid-1",
      generation: 1,
      spec: executionSpec.parse({ crewRef: { name: "demo" }, inputs: { topic: "tides" }, stop }),
      ...(status ? { status } : {}),
    },
    crew,
    observed,
    now,
  };
}

const result = (taskName: string, taskIndex: number, over: Partial<TaskResultSpec> = {}): TaskResultSpec => ({
  executionRef: { name: ID },
  taskName,
  taskIndex,
  agent: "Researcher",
  output: `output of ${taskName}`,
  attempt: 1,
  executionTime: 2,
  ...over,
});

const running = (startTime = at(0).toISOString()): ObservedTask["run"] => ({ state: "running", startTime });
const statusOf = (actions: Action[]) => actions.find((a) => a.type === "setStatus")?.status;
const kinds = (actions: Action[]) => actions.map((a) => a.type);

describe("a crew whose CrewAI project runs whole", () => {
  it("starts one run, the first task's, with the project and the crew's tasks in its assignment", () => {
    const { actions } = decide(input({}));
    const starts = actions.filter((a) => a.type === "startTask");
    expect(starts).toHaveLength(1);
    const start = starts[0]!;
    expect(start.type === "startTask" && start.index).toBe(0);
    expect(start.type === "startTask" && start.assignment.project).toEqual({
      crew: "demo.crew:Demo",
      tasks: [
        { name: "research_task", index: 0 },
        { name: "reporting_task", index: 1 },
        { name: "summary_task", index: 2 },
      ],
    });
  });

  it("records each task's result as it arrives, the run passing to the next task, and never starts another run", () => {
    // The project's run is observed as the first task's (its Job); the second task's result came in on its own.
    const status = statusOf(decide(input({})).actions)!;
    const first = decide(
      input({ research_task: { run: running(), results: [result("research_task", 0)] } }, status, at(5)),
    );
    expect(kinds(first.actions)).not.toContain("startTask");
    const after = statusOf(first.actions)!;
    expect(after.tasks!.map((t) => t.phase)).toEqual(["Succeeded", "Running", "Pending"]);
    expect(after.currentTask).toBe("reporting_task");
    expect(after.progress).toEqual({ completedTasks: 1, totalTasks: 3 });
    // The later task's clock starts when it is first seen running, not when the project's run began.
    expect(after.tasks![1]!.startTime).toBe(at(5).toISOString());

    const all = decide(
      input(
        {
          research_task: {
            run: { state: "succeeded", startTime: at(0).toISOString() },
            results: [result("research_task", 0)],
          },
          reporting_task: { results: [result("reporting_task", 1)] },
          summary_task: { results: [result("summary_task", 2)] },
        },
        after,
        at(9),
      ),
    );
    expect(statusOf(all.actions)!.phase).toBe("Succeeded");
    expect(kinds(all.actions)).not.toContain("startTask");
  });

  it("a restart whose caches do not show the run yet waits for it instead of starting a second", () => {
    const status = statusOf(decide(input({})).actions)!;
    // Both tasks before the running one reported; the run itself is not in the cache.
    const { actions } = decide(
      input({ research_task: { results: [result("research_task", 0)] } }, { ...status, tasks: status.tasks }, at(3)),
    );
    expect(kinds(actions)).not.toContain("startTask");
  });

  it("a failing task fails the execution with its error, and the tasks after it stay pending", () => {
    const status = statusOf(decide(input({})).actions)!;
    const { actions } = decide(
      input(
        {
          research_task: {
            run: { state: "failed", reason: "BackoffLimitExceeded", startTime: at(0).toISOString() },
            results: [result("research_task", 0), result("reporting_task", 1, { output: undefined, error: "boom" })],
          },
        },
        status,
        at(4),
      ),
    );
    const end = statusOf(actions)!;
    expect(end.phase).toBe("Failed");
    expect(end.error).toBe('Task "reporting_task" failed: boom');
    expect(end.tasks!.map((t) => t.phase)).toEqual(["Succeeded", "Failed", "Pending"]);
  });

  it("a stop, and a task's timeout, stop the project's one run (the first task's)", () => {
    const status = statusOf(decide(input({})).actions)!;
    const observed = { research_task: { run: running(), results: [result("research_task", 0)] } };
    const seen = statusOf(decide(input(observed, status, at(5))).actions)!;
    const stopped = decide(input(observed, seen, at(6), true)).actions.filter((a) => a.type === "stopTask");
    expect(stopped).toEqual([{ type: "stopTask", index: 0, taskName: "research_task" }]);
    const late = decide(input(observed, seen, at(5 + 61))).actions;
    expect(late.filter((a) => a.type === "stopTask")).toEqual([
      { type: "stopTask", index: 0, taskName: "research_task" },
    ]);
    expect(statusOf(late)!.error).toBe('Task "reporting_task" timed out after 60s');
  });

  it("is the crewai runtime's alone", () => {
    const spec = crewSpec.safeParse({ ...crew, runtime: "kubecrew" });
    expect(spec.success).toBe(false);
    expect(crewSpecProblems({ ...crew, runtime: "kubecrew" })).toContain(
      "runner.crew names a CrewAI project (demo.crew:Demo), which only the crewai runtime runs: set spec.runtime to crewai",
    );
    expect(crewSpec.safeParse({ ...crew, runner: { ...crew.runner, crew: "demo.crew.Demo" } }).success).toBe(false);
  });

  it("refuses a task that waits for a person: a project runs whole, so none of its tasks can be run again alone", () => {
    const tasks = crew.tasks.map((t, i) => (i === 1 ? { ...t, humanInput: true } : t));
    expect(crewSpec.safeParse({ ...crew, tasks }).success).toBe(false);
    expect(crewSpecProblems({ ...crew, tasks })).toEqual([
      'task "reporting_task" has humanInput, which a whole CrewAI project (runner.crew) cannot wait for: ' +
        "remove humanInput, or run the crew task by task (without runner.crew)",
    ]);
    // Task by task, the crewai runtime answers CrewAI's human-input hook with kubecrew's wait.
    const { crew: _project, ...runner } = crew.runner;
    expect(crewSpec.safeParse({ ...crew, tasks, runner }).success).toBe(true);
  });
});

// A crewai crew declared in the Crew whose process CrewAI runs only whole: the same one run, its Crew in the assignment.
describe("a crewai crew CrewAI runs whole from its spec (hierarchical, or agents that delegate)", () => {
  const llm = { provider: "openai", model: "gpt-4o-mini", apiKeySecretRef: { name: "llm", key: "key" } } as const;
  const hierarchical: CrewSpec = crewSpec.parse({
    runtime: "crewai",
    process: "hierarchical",
    llm,
    managerLlm: { provider: "openai", model: "gpt-4o" },
    inputs: [{ name: "topic" }],
    agents: [
      { name: "researcher", role: "{topic} Researcher", goal: "Find", tools: ["http_request"] },
      { name: "writer", role: "Writer", goal: "Write", llm: { ...llm, model: "gpt-4.1" } },
    ],
    tasks: [
      { name: "article", description: "About {topic}", expectedOutput: "An article", guardrails: [{ maxLength: 9 }] },
      { name: "title", description: "Title it", expectedOutput: "A title", agent: "writer", context: ["article"] },
    ],
  });
  const startOf = (spec: CrewSpec) => {
    const starts = decide({ ...input({}), crew: spec }).actions.filter((a) => a.type === "startTask");
    expect(starts).toHaveLength(1);
    return starts[0]!.type === "startTask" ? starts[0]!.assignment : undefined;
  };

  it("starts one run with the declared crew: its process, manager and tasks (inputs filled in), every agent in the pod", () => {
    const assignment = startOf(hierarchical)!;
    expect(assignment.project).toEqual({
      declared: {
        process: "hierarchical",
        manager: "llm",
        tasks: [
          { name: "article", description: "About tides", expectedOutput: "An article", guardrails: [{ maxLength: 9 }] },
          { name: "title", description: "Title it", expectedOutput: "A title", agent: "writer", context: ["article"] },
        ],
      },
      tasks: [
        { name: "article", index: 0 },
        { name: "title", index: 1 },
      ],
    });
    // The manager is the run's agent (managerLlm its model); every agent is a coworker, with its own model and tools.
    expect(assignment.agent.llm?.model).toBe("gpt-4o");
    expect(assignment.coworkers!.map((c) => [c.agent.role, c.agent.llm?.model])).toEqual([
      ["tides Researcher", "gpt-4o-mini"],
      ["Writer", "gpt-4.1"],
    ]);
    expect(runsWhole(hierarchical)).toBe(true);
  });

  it("a sequential crew runs whole when an agent delegates, and task by task otherwise or on the kubecrew runtime", () => {
    const sequential = {
      ...hierarchical,
      process: "sequential" as const,
      tasks: hierarchical.tasks.map((t) => ({ ...t, agent: "writer" })),
    };
    expect(runsWhole(sequential)).toBe(false);
    const delegating = { ...sequential, agents: sequential.agents.map((a) => ({ ...a, allowDelegation: true })) };
    expect(runsWhole(delegating)).toBe(true);
    expect(startOf(delegating)!.project!.declared!.process).toBe("sequential");
    expect(runsWhole({ ...hierarchical, runtime: "kubecrew" })).toBe(false);
    expect(startOf({ ...hierarchical, runtime: "kubecrew" })!.project).toBeUndefined();
  });

  it("a managerAgent is the run's agent, named as the manager", () => {
    const manager = {
      name: "boss",
      role: "Boss",
      goal: "Lead",
      backstory: "",
      tools: [],
      mcps: [],
      apps: [],
      maxIter: 5,
    };
    const assignment = startOf({ ...hierarchical, managerAgent: manager })!;
    expect(assignment.project!.declared!.manager).toBe("agent");
    expect(assignment.agent.role).toBe("Boss");
  });

  it("gives its agents their mcps and apps and its tasks their tools; refuses a wait for a person, and tools without an agent", () => {
    const agents = hierarchical.agents.map((a, i) =>
      i === 0 ? { ...a, mcps: ["https://mcp.example/mcp"], apps: ["gmail"] } : a,
    );
    const tasks = hierarchical.tasks.map((t, i) => (i === 1 ? { ...t, tools: ["lookup"] } : t));
    expect(crewSpecProblems({ ...hierarchical, agents, tasks })).toEqual([]);
    const assignment = startOf({ ...hierarchical, agents, tasks })!;
    // Each agent's servers are resolved for it alone; the task's tools go with the declared task.
    expect(assignment.coworkers!.map((c) => c.tools.mcpServers.map((m) => m.url))).toEqual([
      ["https://mcp.example/mcp"],
      [],
    ]);
    expect(assignment.coworkers![0]!.agent.apps).toEqual(["gmail"]);
    expect(assignment.project!.declared!.tasks[1]!.tools).toEqual(["lookup"]);
    expect(assignment.project!.declared!.tasks[0]!.tools).toBeUndefined();

    const waiting = tasks.map((t, i) => (i === 0 ? { ...t, tools: ["lookup"] } : { ...t, humanInput: true }));
    const whole = "a crew the crewai runtime runs whole (process hierarchical or allowDelegation)";
    expect(crewSpecProblems({ ...hierarchical, agents, tasks: waiting })).toEqual([
      `task "article" has tools but no agent, in ${whole}: a task's tools are tools of its agent's; name the agent (tasks[].agent) or remove tools`,
      `task "title" has humanInput, which ${whole} cannot wait for: its one run holds every task's work; use runtime kubecrew, or remove humanInput`,
    ]);
    expect(crewSpecProblems({ ...hierarchical, agents, tasks: waiting, runtime: "kubecrew" })).toEqual([]);
  });
});
