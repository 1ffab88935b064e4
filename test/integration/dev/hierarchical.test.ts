import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  answer,
  startLlmFixture,
  toolCalls,
  toolsOffered,
  type LlmFixture,
  type RecordedRequest,
} from "../../support/llm-fixture.ts";

// `kubecrew dev` end to end: a hierarchical crew whose manager (OpenAI's API: the LLM fixture) hands work to one
// coworker and asks another a question; each coworker's agent loop runs in the task's process and each delegation is
// a step of the task, in the event stream. And the same crew offline, with the mock provider; a crew's own
// managerAgent in place of managerLlm; and allowDelegation in a sequential crew.
let dev: RunningDev;
let llm: LlmFixture;

const crew = (name: string, provider: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: ${provider}, model: "${provider === "mock" ? "mock" : "test-model"}", baseURL: "${llm.baseURL}" }
  process: hierarchical
  managerLlm: { provider: ${provider}, model: "${provider === "mock" ? "mock" : "manager-model"}", baseURL: "${llm.baseURL}" }
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts on {topic}" }
    - { name: writer, role: Writer, goal: "Write plainly" }
  tasks:
    - name: article
      description: "Write a short article on {topic}"
      expectedOutput: "One paragraph"
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

// A hierarchical crew with a manager of its own: its role and model (preferred to managerLlm, which is set too).
const managedCrew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: managed }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai, model: "test-model", baseURL: "${llm.baseURL}" }
  process: hierarchical
  managerLlm: { provider: openai, model: "manager-model", baseURL: "${llm.baseURL}" }
  managerAgent:
    name: editor
    role: Editor in Chief
    goal: "Publish accurate pieces on {topic}"
    backstory: "Thirty years at a harbour newspaper"
    llm: { provider: openai, model: "editor-model", baseURL: "${llm.baseURL}" }
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts on {topic}" }
  tasks:
    - name: article
      description: "Write a short article on {topic}"
      expectedOutput: "One paragraph"
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

// A sequential crew whose writer may delegate (CrewAI's allow_delegation) to the crew's other agents.
const delegatingCrew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: delegating }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai, model: "test-model", baseURL: "${llm.baseURL}" }
  agents:
    - name: writer
      role: Writer
      goal: "Write plainly about {topic}"
      allowDelegation: true
      llm: { provider: openai, model: "writer-model", baseURL: "${llm.baseURL}" }
    - { name: researcher, role: Researcher, goal: "Find facts on {topic}" }
    - { name: checker, role: Fact Checker, goal: "Check claims" }
  tasks:
    - name: article
      description: "Write a short article on {topic}"
      expectedOutput: "One paragraph"
      agent: writer
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;

beforeAll(async () => {
  llm = await startLlmFixture();
  dev = await startTestDev(
    {
      "tides.yaml": crew("tides", "openai"),
      "offline.yaml": crew("offline", "mock"),
      "managed.yaml": managedCrew(),
      "delegating.yaml": delegatingCrew(),
    },
    { runnerEnv: { ...process.env, OPENAI_API_KEY: "sk-test" } },
  );
}, 60_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
});

interface Final {
  status: string;
  error?: string;
  result?: { output: string; tasks: { task_id: string; output: string; agent: string }[] };
}

const get = (path: string) => fetch(`${dev.url}${path}`, { headers: { authorization: `Bearer ${tokens.org}` } });

async function run(crewName: string): Promise<{ id: string; final: Final }> {
  const res = await fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  expect(res.status).toBe(200);
  const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
  const final = await waitFor(async () => {
    const s = (await (await get(`/crews/${crewName}/status/${id}`)).json()) as Final;
    return s.status === "running" ? undefined : s;
  }, 40_000);
  return { id, final };
}

interface StepData {
  kind: string;
  tool?: string;
  coworker?: string;
  input?: string;
  output?: string;
}

async function steps(crewName: string, id: string): Promise<StepData[]> {
  const text = await (await get(`/crews/${crewName}/status/${id}/events`)).text();
  return text
    .split("\n\n")
    .filter((block) => block.includes("event: step"))
    .map(
      (block) =>
        JSON.parse(
          block
            .split("\n")
            .find((l) => l.startsWith("data: "))!
            .slice(6),
        ).step as StepData,
    );
}

type Message = { role: string; content: string };
const userText = (r: RecordedRequest) => (r.body.messages as Message[]).findLast((m) => m.role === "user")!.content;
const systemText = (r: RecordedRequest) => (r.body.messages as Message[]).find((m) => m.role === "system")!.content;

describe("kubecrew dev: the hierarchical process", () => {
  it("the manager delegates to two coworkers, their answers come back, each delegation is a step", async () => {
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({
        name: "delegate_work",
        input: { coworker: "Researcher", task: "Find two facts about tides", context: "For a short article" },
      }),
      answer("Tides follow the moon. There are two a day."),
      toolCalls({
        name: "ask_coworker",
        input: { coworker: "Writer", question: "How would you say: tides follow the moon?", context: "Plain words" },
      }),
      answer("The moon pulls the sea."),
      answer("The moon pulls the sea, twice a day."),
    );
    const { id, final } = await run("tides");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result!.output).toBe("The moon pulls the sea, twice a day.");
    expect(final.result!.tasks[0]).toMatchObject({ task_id: "article", agent: "Crew Manager" });

    const requests = llm.requests.slice(from);
    expect(requests.map((r) => r.body.model)).toEqual([
      "manager-model",
      "test-model",
      "manager-model",
      "test-model",
      "manager-model",
    ]);
    // The manager is offered both tools, whose coworker argument takes the agents' roles; the coworkers none.
    const offered = toolsOffered(requests[0]!.body);
    expect(offered.map((t) => t.name).sort()).toEqual(["ask_coworker", "delegate_work"]);
    for (const t of offered) {
      expect((t.schema.properties as Record<string, { enum?: string[] }>).coworker!.enum).toEqual([
        "Researcher",
        "Writer",
      ]);
    }
    expect(toolsOffered(requests[1]!.body)).toEqual([]);
    expect(userText(requests[0]!)).toContain("Write a short article on tides");
    // Each coworker's own call: its role, and the work or question handed over with its context.
    expect(systemText(requests[1]!)).toContain("Role: Researcher");
    expect(userText(requests[1]!)).toContain("Find two facts about tides");
    expect(userText(requests[1]!)).toContain("For a short article");
    expect(systemText(requests[3]!)).toContain("Role: Writer");
    expect(userText(requests[3]!)).toContain("How would you say: tides follow the moon?");

    const recorded = await steps("tides", id);
    const delegations = recorded.filter((s) => s.kind === "delegation");
    expect(delegations).toEqual([
      expect.objectContaining({
        tool: "delegate_work",
        coworker: "Researcher",
        input: "Find two facts about tides",
        output: "Tides follow the moon. There are two a day.",
      }),
      expect.objectContaining({
        tool: "ask_coworker",
        coworker: "Writer",
        input: "How would you say: tides follow the moon?",
        output: "The moon pulls the sea.",
      }),
    ]);
    expect(recorded.map((s) => s.kind)).toEqual(["llm", "llm", "delegation", "llm", "llm", "delegation", "llm"]);
  }, 60_000);

  it("runs offline with the mock provider: the manager delegates once to the first coworker", async () => {
    const { id, final } = await run("offline");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    const delegations = (await steps("offline", id)).filter((s) => s.kind === "delegation");
    expect(delegations).toEqual([
      expect.objectContaining({ coworker: "Researcher", input: "Write a short article on tides" }),
    ]);
    expect(final.result!.output).toContain("[mock llm] Answer from a coworker's work.");
  }, 60_000);

  it("a crew's own managerAgent leads: its role and its model (not managerLlm's) make the manager's calls", async () => {
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({
        name: "delegate_work",
        input: { coworker: "Researcher", task: "Find one fact about tides", context: "For the front page" },
      }),
      answer("The moon raises the tides."),
      answer("Tides rise with the moon."),
    );
    const { id, final } = await run("managed");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result!.output).toBe("Tides rise with the moon.");
    expect(final.result!.tasks[0]).toMatchObject({ task_id: "article", agent: "Editor in Chief" });

    const requests = llm.requests.slice(from);
    expect(requests.map((r) => r.body.model)).toEqual(["editor-model", "test-model", "editor-model"]);
    // The manager's prompt is the crew's own agent (placeholders filled in), not the one kubecrew provides.
    expect(systemText(requests[0]!)).toContain("Role: Editor in Chief");
    expect(systemText(requests[0]!)).toContain("Publish accurate pieces on tides");
    expect(systemText(requests[0]!)).not.toContain("Crew Manager");
    expect(
      toolsOffered(requests[0]!.body)
        .map((t) => t.name)
        .sort(),
    ).toEqual(["ask_coworker", "delegate_work"]);
    expect(systemText(requests[1]!)).toContain("Role: Researcher");
    expect(userText(requests[1]!)).toContain("Find one fact about tides");

    const delegations = (await steps("managed", id)).filter((s) => s.kind === "delegation");
    expect(delegations).toEqual([
      expect.objectContaining({
        tool: "delegate_work",
        coworker: "Researcher",
        input: "Find one fact about tides",
        output: "The moon raises the tides.",
      }),
    ]);
  }, 60_000);
});

describe("kubecrew dev: allowDelegation in a sequential crew", () => {
  it("the task's agent hands work to another agent, whose own request holds the work; the delegation is a step", async () => {
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({
        name: "delegate_work",
        input: { coworker: "Researcher", task: "List the two daily tides", context: "The article is for children" },
      }),
      answer("High tide and low tide, twice each a day."),
      answer("The sea comes in and goes out twice a day."),
    );
    const { id, final } = await run("delegating");
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result!.output).toBe("The sea comes in and goes out twice a day.");
    expect(final.result!.tasks[0]).toMatchObject({ task_id: "article", agent: "Writer" });

    const requests = llm.requests.slice(from);
    expect(requests.map((r) => r.body.model)).toEqual(["writer-model", "test-model", "writer-model"]);
    // The writer is offered the delegation tools over every other agent; the coworker gets none.
    const offered = toolsOffered(requests[0]!.body);
    expect(offered.map((t) => t.name).sort()).toEqual(["ask_coworker", "delegate_work"]);
    for (const t of offered) {
      expect((t.schema.properties as Record<string, { enum?: string[] }>).coworker!.enum).toEqual([
        "Researcher",
        "Fact Checker",
      ]);
    }
    expect(systemText(requests[0]!)).toContain("Role: Writer");
    expect(toolsOffered(requests[1]!.body)).toEqual([]);
    // The coworker's own call: its role, the delegated work as its task and the context handed with it.
    expect(systemText(requests[1]!)).toContain("Role: Researcher");
    expect(systemText(requests[1]!)).toContain("Find facts on tides");
    expect(userText(requests[1]!)).toContain("List the two daily tides");
    expect(userText(requests[1]!)).toContain("The article is for children");
    expect(userText(requests[1]!)).not.toContain("Write a short article on tides");

    const recorded = await steps("delegating", id);
    expect(recorded.filter((s) => s.kind === "delegation")).toEqual([
      expect.objectContaining({
        tool: "delegate_work",
        coworker: "Researcher",
        input: "List the two daily tides",
        output: "High tide and low tide, twice each a day.",
      }),
    ]);
    expect(recorded.map((s) => s.kind)).toEqual(["llm", "llm", "delegation", "llm"]);
  }, 60_000);
});
