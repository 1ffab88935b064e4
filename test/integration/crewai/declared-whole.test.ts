import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  answer,
  startLlmFixture,
  toolCalls,
  type LlmFixture,
  type RecordedRequest,
} from "../../support/llm-fixture.ts";

// A Crew manifest on the crewai runtime (no runner.crew) whose process CrewAI can only run whole — hierarchical, with
// managerLlm — run by `kubecrew dev` as one adapter process for the execution: CrewAI's manager delegates to the
// crew's two agents through its own delegation tool, each task is reported as CrewAI completes it, and a task's
// guardrail fails once and sends the answer back with its reason. The OpenAI-compatible fixture sees CrewAI's requests.
const run = promisify(execFile);
let dev: RunningDev;
let llm: LlmFixture;
let python: string;

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

/** CrewAI's own delegation tool's name as its native tool calling sends it, read from the package. */
async function delegateTool(): Promise<string> {
  const code = [
    "from crewai import Agent, LLM",
    "from crewai.tools.agent_tools.agent_tools import AgentTools",
    "from crewai.utilities.string_utils import sanitize_tool_name",
    "a = Agent(role='R', goal='g', backstory='b', llm=LLM(model='openai/x', base_url='http://127.0.0.1:9', api_key='k'))",
    "print(sanitize_tool_name(AgentTools(agents=[a]).tools()[0].name))",
  ].join("\n");
  const env = { ...process.env, CREWAI_DISABLE_TELEMETRY: "true", OTEL_SDK_DISABLED: "true" };
  return (await run(python, ["-c", code], { env })).stdout.trim();
}

beforeAll(async () => {
  python = crewaiPython();
  llm = await startLlmFixture();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.KUBECREW_CREWAI_PYTHON;
  dev = await startTestDev({ "managed.yaml": crew() }, { runnerEnv: env });
}, 180_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
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
async function events(id: string): Promise<Frame[]> {
  const res = await fetch(`${dev.url}/crews/managed/status/${id}/events`, { headers: auth });
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
});
