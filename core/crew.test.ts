import { describe, expect, it } from "vitest";
import { agentFor } from "./crew-process.ts";
import { crew, crewSpec } from "./crew-resource.ts";

const agents = [
  { name: "researcher", role: "Researcher", goal: "Find facts" },
  { name: "writer", role: "Writer", goal: "Write" },
];
const tasks = [
  { name: "research", agent: "researcher", description: "Research", expectedOutput: "Facts" },
  { name: "write", agent: "writer", description: "Write", expectedOutput: "Text" },
];

/** The messages of a rejected spec, or [] when it is accepted. */
function problems(spec: unknown): string[] {
  const result = crewSpec.safeParse(spec);
  return result.success ? [] : result.error.issues.map((i) => i.message);
}

describe("crewSpec", () => {
  it("accepts a valid crew and fills the defaults", () => {
    const spec = crewSpec.parse({ agents, tasks });
    expect(spec.process).toBe("sequential");
    expect(spec.inputs).toEqual([]);
    expect(spec.runner).toEqual({
      taskTimeoutSeconds: 600,
      executionTimeoutSeconds: 3600,
      retries: 1,
      humanInputTimeoutSeconds: 86_400,
      humanInputMaxRetries: 5,
    });
    expect(spec.agents[0]).toEqual({
      name: "researcher",
      role: "Researcher",
      goal: "Find facts",
      backstory: "",
      tools: [],
      mcps: [],
      apps: [],
      maxIter: 20,
    });
    expect(spec.tasks[1]).toEqual({ ...tasks[1], asyncExecution: false, humanInput: false });
  });

  it("refuses toolPolicy.requireApproval on the crewai runtime, which would not hold the calls", () => {
    const toolPolicy = { requireApproval: ["http_request:POST"] };
    expect(problems({ agents, tasks, toolPolicy, runtime: "crewai" })).toEqual([
      "toolPolicy.requireApproval is not supported on the crewai runtime yet: use runtime kubecrew",
    ]);
    expect(problems({ agents, tasks, toolPolicy })).toEqual([]);
    expect(problems({ agents, tasks, toolPolicy: { requireApproval: ["gmail/fly"] } })[0]).toContain(
      'app "gmail" has no action "fly"',
    );
  });

  it("fills the runner defaults a partial runner section leaves out", () => {
    const spec = crewSpec.parse({ agents, tasks, runner: { image: "kubecrew:dev", retries: 0 } });
    expect(spec.runner).toEqual({
      image: "kubecrew:dev",
      retries: 0,
      taskTimeoutSeconds: 600,
      executionTimeoutSeconds: 3600,
      humanInputTimeoutSeconds: 86_400,
      humanInputMaxRetries: 5,
    });
  });

  it("makes declared inputs required unless they say otherwise", () => {
    const spec = crewSpec.parse({ agents, tasks, inputs: [{ name: "topic" }, { name: "tone", required: false }] });
    expect(spec.inputs.map((i) => [i.name, i.required])).toEqual([
      ["topic", true],
      ["tone", false],
    ]);
  });

  it("accepts connected apps by CrewAI's names: an app or one app/action", () => {
    const spec = crewSpec.parse({
      agents: [{ ...agents[0], apps: ["gmail", "google_calendar/list_events", "notion/create_page"] }, agents[1]],
      tasks,
      apps: { runAs: "alice" },
    });
    expect(spec.agents[0]!.apps).toEqual(["gmail", "google_calendar/list_events", "notion/create_page"]);
    expect(spec.apps).toEqual({ runAs: "alice" });
  });

  it("refuses an unknown app or action, naming the valid apps", () => {
    for (const unknown of ["gmial", "gmail/send_mail", "gmail/send_email/x", "google_calendar/"]) {
      const messages = problems({ agents: [{ ...agents[0], apps: [unknown] }, agents[1]], tasks });
      expect(messages).toEqual([
        `unknown app or action ${JSON.stringify(unknown)}: an app (gmail, google_calendar, google_drive, google_sheets, ` +
          "google_docs, microsoft_outlook, microsoft_calendar, microsoft_onedrive, microsoft_excel, microsoft_word, " +
          "salesforce, hubspot, notion) or one of its actions as app/action, e.g. gmail/send_email",
      ]);
    }
  });

  it("rejects a task naming an agent that is not defined", () => {
    expect(problems({ agents, tasks: [{ ...tasks[0], agent: "editor" }] })).toEqual([
      'task "research" names agent "editor", which is not defined',
    ]);
  });

  it("rejects duplicate task names, naming the duplicate once", () => {
    expect(problems({ agents, tasks: [tasks[0], tasks[1], { ...tasks[1], description: "Again" }, tasks[1]] })).toEqual([
      'duplicate task name "write"',
    ]);
  });

  it("rejects duplicate agent and input names", () => {
    expect(
      problems({
        agents: [...agents, { ...agents[0], role: "Other" }],
        tasks,
        inputs: [{ name: "topic" }, { name: "topic" }],
      }),
    ).toEqual(['duplicate agent name "researcher"', 'duplicate input name "topic"']);
  });

  it("rejects context naming a later task, the task itself, or no task at all", () => {
    expect(problems({ agents, tasks: [{ ...tasks[0], context: ["write"] }, tasks[1]] })).toEqual([
      'task "research" takes context from "write", which does not run before it',
    ]);
    expect(problems({ agents, tasks: [tasks[0], { ...tasks[1], context: ["write"] }] })).toEqual([
      'task "write" takes context from itself',
    ]);
    expect(problems({ agents, tasks: [tasks[0], { ...tasks[1], context: ["review"] }] })).toEqual([
      'task "write" takes context from "review", which is not a task of this crew',
    ]);
  });

  it("refuses CrewAI's async mistakes: context from an async task starting beside it, more than one async task last", () => {
    const t = (name: string, asyncExecution: boolean, context?: string[]) => ({
      name,
      agent: "writer",
      description: name,
      expectedOutput: name,
      asyncExecution,
      ...(context ? { context } : {}),
    });
    expect(problems({ agents, tasks: [t("a", true), t("b", true, ["a"]), t("j", false)] })).toEqual([
      'task "b" is asynchronous and takes context from "a", an asynchronous task that starts with it: make a task between them synchronous, or "b" synchronous',
    ]);
    expect(problems({ agents, tasks: [t("s", false), t("a", true), t("b", true)] })).toEqual([
      'the crew ends with 2 asynchronous tasks ("a", "b"): at most one asynchronous task may come last',
    ]);
    // Both at once, one line each.
    expect(problems({ agents, tasks: [t("a", true), t("b", true, ["a"])] })).toHaveLength(2);
  });

  it("accepts what CrewAI accepts of async tasks: context across a synchronous task, one async task last", () => {
    const t = (name: string, asyncExecution: boolean, context?: string[]) => ({
      name,
      agent: "writer",
      description: name,
      expectedOutput: name,
      asyncExecution,
      ...(context ? { context } : {}),
    });
    expect(
      problems({
        agents,
        tasks: [t("a", true), t("b", true), t("j", false, ["a", "b"]), t("c", true, ["a", "j"]), t("d", false)],
      }),
    ).toEqual([]);
    expect(problems({ agents, tasks: [t("a", true), t("b", true), t("j", false), t("last", true, ["b"])] })).toEqual(
      [],
    );
    expect(crewSpec.parse({ agents, tasks }).tasks.map((x) => x.asyncExecution)).toEqual([false, false]);
  });

  it("accepts context naming earlier tasks, and an empty context", () => {
    const third = { name: "edit", agent: "writer", description: "Edit", expectedOutput: "Better text" };
    expect(
      problems({
        agents,
        tasks: [tasks[0], { ...tasks[1], context: [] }, { ...third, context: ["research", "write"] }],
      }),
    ).toEqual([]);
  });

  it("rejects an openai-compatible model without a baseURL, on an agent or as the crew's default", () => {
    const compatible = { provider: "openai-compatible", model: "llama3" };
    expect(problems({ agents: [{ ...agents[0], llm: compatible }, agents[1]], tasks })).toEqual([
      'agent "researcher": provider openai-compatible needs a baseURL',
    ]);
    expect(problems({ agents, tasks, llm: compatible })).toEqual([
      'agent "researcher": provider openai-compatible needs a baseURL',
      'agent "writer": provider openai-compatible needs a baseURL',
    ]);
    expect(problems({ agents, tasks, llm: { ...compatible, baseURL: "http://localhost:11434/v1" } })).toEqual([]);
  });

  it("lets an agent's own model replace a crew default that would be wrong for it", () => {
    const own = { provider: "mock", model: "m" };
    expect(
      problems({
        agents: agents.map((a) => ({ ...a, llm: own })),
        tasks,
        llm: { provider: "openai-compatible", model: "x" },
      }),
    ).toEqual([]);
  });

  it("reports every problem at once", () => {
    expect(
      problems({
        agents,
        tasks: [
          { ...tasks[0], agent: "ghost" },
          { ...tasks[1], context: ["later"] },
          { ...tasks[1], name: "research" },
        ],
      }),
    ).toEqual([
      'duplicate task name "research"',
      'task "research" names agent "ghost", which is not defined',
      'task "write" takes context from "later", which is not a task of this crew',
    ]);
  });

  it.each([
    ["a crew without agents", { agents: [], tasks }],
    ["a crew without tasks", { agents, tasks: [] }],
    ["a process other than sequential", { agents, tasks, process: "hierarchical" }],
    ["a task name that is not a placeholder name", { agents, tasks: [{ ...tasks[0], name: "1st task" }] }],
    ["an agent name with a dot", { agents: [{ ...agents[0], name: "a.b" }], tasks }],
    ["an input name with a space", { agents, tasks, inputs: [{ name: "my topic" }] }],
    ["an unknown provider", { agents, tasks, llm: { provider: "gemini-x", model: "m" } }],
    [
      "a baseURL that is not a URL",
      { agents, tasks, llm: { provider: "openai-compatible", model: "m", baseURL: "localhost" } },
    ],
    ["a zero task timeout", { agents, tasks, runner: { taskTimeoutSeconds: 0 } }],
    ["a fractional execution timeout", { agents, tasks, runner: { executionTimeoutSeconds: 1.5 } }],
    ["more than 10 retries", { agents, tasks, runner: { retries: 11 } }],
    ["negative retries", { agents, tasks, runner: { retries: -1 } }],
    ["an empty description", { agents, tasks: [{ ...tasks[0], description: "" }] }],
    ["an empty role", { agents: [{ ...agents[0], role: "" }, agents[1]], tasks }],
    ["an over-long task name", { agents, tasks: [{ ...tasks[0], name: "t".repeat(64) }] }],
    [
      "more than 100 tasks",
      { agents, tasks: Array.from({ length: 101 }, (_, i) => ({ ...tasks[0], name: `task_${i}` })) },
    ],
    [
      "a context of more than 20 tasks",
      {
        agents,
        tasks: [
          ...Array.from({ length: 21 }, (_, i) => ({ ...tasks[0], name: `task_${i}` })),
          { ...tasks[1], context: Array.from({ length: 21 }, (_, i) => `task_${i}`) },
        ],
      },
    ],
    [
      "more than 50 agents",
      { agents: Array.from({ length: 51 }, (_, i) => ({ ...agents[0], name: `agent_${i}` })), tasks },
    ],
  ])("rejects %s", (_what, spec) => {
    expect(problems(spec)).not.toEqual([]);
  });

  it("accepts 100 tasks and 50 agents", () => {
    const many = crewSpec.safeParse({
      agents: Array.from({ length: 50 }, (_, i) => ({ ...agents[0], name: `agent_${i}` })),
      tasks: Array.from({ length: 100 }, (_, i) => ({ ...tasks[0], name: `task_${i}`, agent: `agent_${i % 50}` })),
    });
    expect(many.success).toBe(true);
  });
});

describe("crew", () => {
  it("parses a whole Crew resource", () => {
    const parsed = crew.parse({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Crew",
      metadata: { name: "research" },
      spec: { agents, tasks },
    });
    expect(parsed.spec.tasks).toHaveLength(2);
  });

  it("rejects another kind or API version", () => {
    const base = { apiVersion: "kubecrew.io/v1alpha1", kind: "Crew", metadata: { name: "x" }, spec: { agents, tasks } };
    expect(crew.safeParse({ ...base, kind: "CrewExecution" }).success).toBe(false);
    expect(crew.safeParse({ ...base, apiVersion: "kubecrew.io/v1" }).success).toBe(false);
  });
});

describe("agentFor", () => {
  it("gives the task's agent with the crew's default model filled in", () => {
    const llm = { provider: "mock" as const, model: "m" };
    const spec = crewSpec.parse({ agents, tasks, llm });
    expect(agentFor(spec, "write")).toMatchObject({ name: "writer", role: "Writer", llm });
  });

  it("keeps an agent's own model", () => {
    const own = { provider: "anthropic" as const, model: "claude" };
    const spec = crewSpec.parse({
      agents: [{ ...agents[0], llm: own }, agents[1]],
      tasks,
      llm: { provider: "mock", model: "m" },
    });
    expect(agentFor(spec, "research").llm).toEqual(own);
  });

  it("throws for a task the crew does not have", () => {
    const spec = crewSpec.parse({ agents, tasks });
    expect(() => agentFor(spec, "missing")).toThrow('task "missing" has no agent');
  });
});
