import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { crewaiDelegateTool, crewaiMcpToolNames } from "../../support/crewai-tool-names.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  answer,
  startLlmFixture,
  toolCalls,
  toolsOffered,
  type LlmFixture,
  type RecordedRequest,
} from "../../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// A Crew manifest on the crewai runtime (no runner.crew) whose process CrewAI can only run whole — hierarchical, with
// managerLlm — run by `kubecrew dev` as one adapter process for the execution: CrewAI's manager delegates to the
// crew's two agents through its own delegation tool, each task is reported as CrewAI completes it, and a task's
// guardrail fails once and sends the answer back with its reason. The OpenAI-compatible fixture sees CrewAI's requests.
let dev: RunningDev;
let llm: LlmFixture;
let python: string;
let mcp: FixtureMcpServer;
const MCP_SECRET = "mcp-header-secret-0123456789";

const crew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: managed }
spec:
  runtime: crewai
  inputs: [{ name: topic }]
  process: hierarchical
  llm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: "${llm.baseURL}" }
  managerLlm: { provider: openai-compatible, model: gpt-4o, baseURL: "${llm.baseURL}" }
  runner: { retries: 0 }
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts about {topic}" }
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
    - { name: article, description: "Write an article about {topic}", expectedOutput: "An article" }
    - name: title
      agent: writer
      description: Title the article
      expectedOutput: A title
      guardrails: [{ maxLength: 12 }]
`;

// The same crew's shape with tools: the researcher uses an MCP server of the crew's (the repository's fixture server),
// and the second task names the one tool of the researcher's it may use. CrewAI gives a hierarchical crew's task the
// tools of its agent (all of them, or those the task names) and hands them to the manager, beside its delegation.
const tooled = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: tooled }
spec:
  runtime: crewai
  process: hierarchical
  llm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: "${llm.baseURL}" }
  managerLlm: { provider: openai-compatible, model: gpt-4o, baseURL: "${llm.baseURL}" }
  runner: { retries: 0 }
  mcpServers:
    - name: docs
      url: "${mcp.url}"
      tools: [lookup, broken]
      headers: [{ name: Authorization, value: "Bearer ${MCP_SECRET}" }]
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts", mcps: [docs] }
    - { name: writer, role: Writer, goal: "Write" }
  tasks:
    - { name: facts, agent: researcher, description: "Find facts about tides", expectedOutput: "Facts" }
    - { name: check, agent: researcher, description: "Check the moon", expectedOutput: "A check", tools: [lookup] }
`;

// An agent whose server takes a header from a Secret the runner was not given: the one run cannot be launched.
const unready = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: unready }
spec:
  runtime: crewai
  process: hierarchical
  llm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: "${llm.baseURL}" }
  managerLlm: { provider: openai-compatible, model: gpt-4o, baseURL: "${llm.baseURL}" }
  runner: { retries: 0, taskTimeoutSeconds: 90 }
  mcpServers:
    - name: docs
      url: "${mcp.url}"
      headers: [{ name: Authorization, valueFrom: { secretKeyRef: { name: docs-mcp, key: token } } }]
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts", mcps: [docs] }
  tasks:
    - { name: facts, description: "Find facts about tides", expectedOutput: "Facts" }
`;

const delegateTool = () => crewaiDelegateTool(python);

beforeAll(async () => {
  python = crewaiPython();
  llm = await startLlmFixture();
  mcp = await startFixtureMcpServer();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.KUBECREW_CREWAI_PYTHON;
  delete env.KUBECREW_SECRET_DOCS_MCP_TOKEN;
  dev = await startTestDev(
    { "managed.yaml": crew(), "tooled.yaml": tooled(), "unready.yaml": unready() },
    { runnerEnv: env },
  );
}, 180_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
  await mcp?.stop();
});

interface Status {
  status: string;
  error?: string;
  result?: { output: string; tasks: { task_id: string; output: string; agent: string }[] };
}
interface Frame {
  event: string;
  data: Record<string, unknown>;
}
const auth = { authorization: `Bearer ${tokens.org}` };
const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);

/** The execution's event stream, read to its final event. */
async function events(id: string, crewName = "managed"): Promise<Frame[]> {
  const res = await fetch(`${dev.url}/crews/${crewName}/status/${id}/events`, { headers: auth });
  const reader = res.body!.getReader();
  let raw = "";
  const frames = () =>
    raw
      .split("\n\n")
      .slice(0, -1)
      .filter((block) => /^event: /m.test(block) && /^data: /m.test(block))
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)![1]!,
        data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>,
      }));
  while (!frames().some((f) => f.event.startsWith("execution_"))) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += new TextDecoder().decode(value);
  }
  await reader.cancel();
  return frames();
}

describe("a declared hierarchical crew on the crewai runtime in kubecrew dev", { timeout: 300_000 }, () => {
  it("runs whole: the manager delegates to both agents, a guardrail fails once, each task is reported", async () => {
    const delegate = await delegateTool();
    llm.enqueue(
      toolCalls({ name: delegate, input: { task: "Find two facts", context: "An article", coworker: "Researcher" } }),
      answer("Tides follow the moon."),
      toolCalls({
        name: delegate,
        input: { task: "Write it up", context: "Tides follow the moon.", coworker: "Writer" },
      }),
      answer("A draft on tides."),
      answer("The article on tides."),
      // The title task: the manager answers (CrewAI's manager runs every task), too long first, then short enough.
      answer("A very long title about tides"),
      answer("Tides"),
    );
    const res = await fetch(`${dev.url}/crews/managed/kickoff`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ inputs: { topic: "tides" } }),
    });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
    const final = await waitFor(async () => {
      const s = (await (await fetch(`${dev.url}/crews/managed/status/${id}`, { headers: auth })).json()) as Status;
      return s.status === "running" ? undefined : s;
    }, 200_000);
    expect(final.error).toBeUndefined();
    expect(final.result!.tasks.map((t) => [t.task_id, t.output])).toEqual([
      ["article", "The article on tides."],
      ["title", "Tides"],
    ]);
    const requests = llm.requests;
    expect(requests).toHaveLength(7);
    // The manager is CrewAI's own around managerLlm; its coworkers' calls got the work handed over, with their model.
    expect(requests[0]!.body.model).toBe("gpt-4o");
    expect(text(requests[1]!)).toContain("Find two facts");
    expect(requests[1]!.body.model).toBe("gpt-4o-mini");
    expect(text(requests[3]!)).toContain("Write it up");
    expect(text(requests[4]!)).toContain("A draft on tides.");
    // The guardrail's reason went back with the retry.
    expect(text(requests[6]!)).toContain("more than 12");

    const steps = (await events(id))
      .filter((f) => f.event === "step")
      .map((f) => [f.data.task_id, (f.data.step as Record<string, unknown>).kind, f.data.step] as const);
    const delegations = steps.filter(([, kind]) => kind === "delegation");
    expect(delegations.map(([task, , s]) => [task, (s as { coworker: string }).coworker])).toEqual([
      ["article", "Researcher"],
      ["article", "Writer"],
    ]);
    const checks = steps.filter(([, kind]) => kind === "guardrail");
    expect(checks.map(([task, , s]) => [task, (s as { error?: string }).error ?? "passed"])).toEqual([
      ["title", "the answer has 29 characters, more than 12"],
      ["title", "passed"],
    ]);
  });

  it("gives each agent its MCP servers, and a task's tools to its manager, in the one run", async () => {
    const delegate = await delegateTool();
    const names = await crewaiMcpToolNames(python, mcp.url);
    const [lookup, broken] = [names.lookup!, names.broken!];
    const before = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: delegate, input: { task: "Look tides up", context: "", coworker: "Researcher" } }),
      toolCalls({ name: lookup, input: { key: "tides" } }),
      answer("Tides: value of tides."),
      answer("Facts on tides."),
      // The check task: its tools went to the manager (CrewAI's Task tools), which calls the tool itself.
      toolCalls({ name: lookup, input: { key: "moon" } }),
      answer("Checked: value of moon."),
    );
    const res = await fetch(`${dev.url}/crews/tooled/kickoff`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ inputs: {} }),
    });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
    const final = await waitFor(async () => {
      const s = (await (await fetch(`${dev.url}/crews/tooled/status/${id}`, { headers: auth })).json()) as Status;
      return s.status === "running" ? undefined : s;
    }, 200_000);
    expect(final.error).toBeUndefined();
    expect(final.result!.tasks.map((t) => [t.task_id, t.output])).toEqual([
      ["facts", "Facts on tides."],
      ["check", "Checked: value of moon."],
    ]);
    const requests = llm.requests.slice(before);
    expect(requests).toHaveLength(6);
    const offered = (r: RecordedRequest) => toolsOffered(r.body).map((t) => t.name);
    // The researcher has both tools of its server's allow-list, and so has the first task's manager (CrewAI's own
    // way: the task takes its agent's tools); the second task's manager only the one the task names.
    expect(offered(requests[1]!)).toEqual(expect.arrayContaining([lookup, broken]));
    expect(offered(requests[0]!)).toEqual(expect.arrayContaining([delegate, lookup, broken]));
    expect(offered(requests[4]!)).toEqual(expect.arrayContaining([delegate, lookup]));
    expect(offered(requests[4]!)).not.toContain(broken);
    expect(mcp.calls).toEqual([
      { tool: "lookup", arguments: { key: "tides" } },
      { tool: "lookup", arguments: { key: "moon" } },
    ]);
    expect(mcp.requests.some((h) => h.authorization === `Bearer ${MCP_SECRET}`)).toBe(true);

    const steps = (await events(id, "tooled"))
      .filter((f) => f.event === "step")
      .map((f) => [f.data.task_id, f.data.step as { kind: string; tool?: string; output?: string }] as const);
    expect(steps.filter(([, s]) => s.kind === "tool").map(([task, s]) => [task, s.tool, s.output])).toEqual([
      ["facts", lookup, "value of tides"],
      ["check", lookup, "value of moon"],
    ]);
    expect(JSON.stringify(final) + JSON.stringify(steps)).not.toContain(MCP_SECRET);
  });

  it("fails at once, naming the Secret, when an agent's server header cannot be resolved", async () => {
    const before = llm.requests.length;
    const res = await fetch(`${dev.url}/crews/unready/kickoff`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ inputs: {} }),
    });
    const id = ((await res.json()) as { kickoff_id: string }).kickoff_id;
    const final = await waitFor(async () => {
      const s = (await (await fetch(`${dev.url}/crews/unready/status/${id}`, { headers: auth })).json()) as Status & {
        execution_time: number;
      };
      return s.status === "running" ? undefined : s;
    }, 120_000);
    expect(final.error).toBe(
      'Task "facts" failed: MCP server "docs": header "Authorization" comes from Secret docs-mcp/token, but KUBECREW_SECRET_DOCS_MCP_TOKEN is not set for the runner',
    );
    // Not the task's timeout: the adapter started early for the run is ended with it.
    expect(final.execution_time).toBeLessThan(60);
    expect(llm.requests.length).toBe(before);
  });
});
