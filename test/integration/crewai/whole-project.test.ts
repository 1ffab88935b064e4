import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { createCrewaiProject, giveToolToResearcher } from "../../support/crewai-project.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import {
  answer,
  startLlmFixture,
  toolCalls,
  type LlmFixture,
  type RecordedRequest,
} from "../../support/llm-fixture.ts";

// `spec.runner.crew`: a user's whole CrewAI project run unchanged by `kubecrew dev` as one local process for the
// execution, with the crew's own process — a project made by the real CLI (`crewai create crew --classic`, its custom
// tool filled in and given to its researcher), and a hierarchical @CrewBase project whose manager delegates to two
// agents — against the OpenAI-compatible fixture, which sees CrewAI's own requests.
const run = promisify(execFile);
let dev: RunningDev;
let llm: LlmFixture;
let python: string;
let src: string;

const HIERARCHICAL = `from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task


@CrewBase
class Hier:
    """A manager over a researcher and a writer."""

    @agent
    def researcher(self) -> Agent:
        return Agent(role="Researcher", goal="Find facts about {topic}", backstory="Reads a lot.")

    @agent
    def writer(self) -> Agent:
        return Agent(role="Writer", goal="Write about {topic}", backstory="Writes well.")

    @task
    def article(self) -> Task:
        return Task(description="Write an article about {topic}", expected_output="An article")

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.hierarchical, manager_llm="gpt-4o-mini")
`;

const crewYaml = (name: string, body: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  runtime: crewai
  llm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: "${llm.baseURL}" }
${body}`;

const cliCrew = () =>
  crewYaml(
    "tidepool",
    `  inputs: [{ name: topic }, { name: current_year }]
  runner: { crew: "tidepool.crew:Tidepool", retries: 0 }
  agents:
    - { name: researcher, role: "{topic} Senior Data Researcher", goal: "Uncover {topic}" }
    - { name: reporting_analyst, role: "{topic} Reporting Analyst", goal: "Report on {topic}" }
  tasks:
    - { name: research_task, agent: researcher, description: "Research {topic} in {current_year}", expectedOutput: "Bullets" }
    - { name: reporting_task, agent: reporting_analyst, description: "Report", expectedOutput: "A report" }
`,
  );

const hierarchicalCrew = () =>
  crewYaml(
    "hier",
    `  inputs: [{ name: topic }]
  process: hierarchical
  managerLlm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: "${llm.baseURL}" }
  runner: { crew: "hier.crew:Hier", retries: 0 }
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts about {topic}" }
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
    - { name: article, description: "Write an article about {topic}", expectedOutput: "An article" }
`,
  );

/** A name as CrewAI's native tool calling sends it, from the package itself. */
async function crewaiToolName(code: string): Promise<string> {
  const env = {
    ...process.env,
    CREWAI_DISABLE_TELEMETRY: "true",
    OTEL_SDK_DISABLED: "true",
    OPENAI_API_KEY: "k",
    PYTHONPATH: src,
  };
  const named = (await run(python, ["-c", code], { env })).stdout.trim();
  const sanitize = `import sys\nfrom crewai.utilities.agent_utils import sanitize_tool_name\nprint(sanitize_tool_name(sys.argv[1]))`;
  return (await run(python, ["-c", sanitize, named], { env })).stdout.trim();
}

beforeAll(async () => {
  python = crewaiPython();
  llm = await startLlmFixture();
  const root = mkdtempSync(join(tmpdir(), "kubecrew-projects-"));
  const project = createCrewaiProject(python, root, "tidepool");
  giveToolToResearcher(project, "tidepool");
  src = project.src;
  mkdirSync(join(project.src, "hier"));
  writeFileSync(join(project.src, "hier", "__init__.py"), "");
  writeFileSync(join(project.src, "hier", "crew.py"), HIERARCHICAL);
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: project.src };
  delete env.KUBECREW_CREWAI_PYTHON;
  dev = await startTestDev({ "tidepool.yaml": cliCrew(), "hier.yaml": hierarchicalCrew() }, { runnerEnv: env });
}, 180_000);
afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
});

interface Status {
  status: string;
  error?: string;
  current_task?: string;
  progress?: { completed_tasks: number; total_tasks: number };
  result?: { output: string; tasks: { task_id: string; output: string; agent: string }[] };
}
const auth = { authorization: `Bearer ${tokens.org}` };

async function kickoff(crew: string, inputs: Record<string, string>): Promise<string> {
  const res = await fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ inputs }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}
const status = async (crew: string, id: string) =>
  (await (await fetch(`${dev.url}/crews/${crew}/status/${id}`, { headers: auth })).json()) as Status;
const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);

interface Frame {
  event: string;
  data: Record<string, unknown>;
}
const stepIndex = (f: Frame) => (f.data.step as { index: number }).index;

/** The event stream's frames, read until `enough` of them have come (or the stream ends). */
async function readEvents(res: Response, enough: (frames: Frame[]) => boolean): Promise<Frame[]> {
  const reader = res.body!.getReader();
  let raw = "";
  const frames = () =>
    raw
      .split("\n\n")
      .slice(0, -1) // the last block is still coming
      .filter((block) => /^event: /m.test(block) && /^data: /m.test(block))
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)![1]!,
        data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>,
      }));
  while (!enough(frames())) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return frames();
}

describe("a whole CrewAI project in kubecrew dev (spec.runner.crew)", { timeout: 300_000 }, () => {
  it("runs the CLI's project with its own tool; each task is reported as it finishes, its output the next's context", async () => {
    const tool = await crewaiToolName(
      "from tidepool.tools.custom_tool import MyCustomTool\nprint(MyCustomTool().name)",
    );
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: tool, input: { argument: "tides" } }),
      // The first task's answer takes a while: its first steps are streamed meanwhile.
      answer("Tides follow the moon.", undefined, 4000),
      // The second task's answer takes a while: the first task's result is in /status meanwhile.
      answer("A report on tides.", undefined, 4000),
    );
    const id = await kickoff("tidepool", { topic: "tides", current_year: "2026" });
    // The research's steps as CrewAI emits them: its tool call and the tool's answer while it waits for the model.
    const events = await fetch(`${dev.url}/crews/tidepool/status/${id}/events`, { headers: auth });
    const early = await readEvents(events, (frames) =>
      frames.some((f) => f.event === "step" && f.data.task_id === "research_task" && stepIndex(f) === 1),
    );
    expect(early.map((f) => [f.event, f.data.task_id])).toEqual([
      ["task_started", "research_task"],
      ["step", "research_task"],
      ["step", "research_task"],
    ]);
    expect(await status("tidepool", id)).toMatchObject({ status: "running", progress: { completed_tasks: 0 } });
    await events.body?.cancel();
    const midway = await waitFor(async () => {
      const s = await status("tidepool", id);
      return s.status !== "running" || (s.progress?.completed_tasks ?? 0) >= 1 ? s : undefined;
    }, 200_000);
    expect(midway).toMatchObject({
      status: "running",
      current_task: "reporting_task",
      progress: { completed_tasks: 1, total_tasks: 2 },
    });
    const final = await waitFor(async () => {
      const s = await status("tidepool", id);
      return s.status === "running" ? undefined : s;
    }, 200_000);
    expect(final.error).toBeUndefined();
    expect(final.result!.output).toBe("A report on tides.");
    expect(final.result!.tasks.map((t) => [t.task_id, t.output, t.agent])).toEqual([
      ["research_task", "Tides follow the moon.", "tides Senior Data Researcher"],
      ["reporting_task", "A report on tides.", "tides Reporting Analyst"],
    ]);
    const requests = llm.requests.slice(from);
    expect(requests).toHaveLength(3);
    // CrewAI's own requests: the project's YAML role with the inputs filled in, its tool's answer, then the context.
    expect(text(requests[0]!)).toContain("tides Senior Data Researcher");
    expect(text(requests[1]!)).toContain("TOOL SAYS TIDES");
    expect(text(requests[2]!)).toContain("Tides follow the moon.");
  });

  it("runs a hierarchical project: its manager delegates to both agents, and the task completes", async () => {
    const delegate = await crewaiToolName(
      [
        "from crewai import Agent, LLM",
        "from crewai.tools.agent_tools.agent_tools import AgentTools",
        "a = Agent(role='R', goal='g', backstory='b', llm=LLM(model='openai/x', base_url='http://127.0.0.1:9', api_key='k'))",
        "print(AgentTools(agents=[a]).tools()[0].name)",
      ].join("\n"),
    );
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: delegate, input: { task: "Find two facts", context: "An article", coworker: "Researcher" } }),
      answer("Tides follow the moon."),
      toolCalls({
        name: delegate,
        input: { task: "Write it up", context: "Tides follow the moon.", coworker: "Writer" },
      }),
      answer("A draft on tides."),
      answer("The article on tides."),
    );
    const id = await kickoff("hier", { topic: "tides" });
    const final = await waitFor(async () => {
      const s = await status("hier", id);
      return s.status === "running" ? undefined : s;
    }, 200_000);
    expect(final.error).toBeUndefined();
    expect(final.result!.tasks.map((t) => [t.task_id, t.output])).toEqual([["article", "The article on tides."]]);
    const requests = llm.requests.slice(from);
    expect(requests).toHaveLength(5);
    // The coworkers' own calls got the work handed over; the manager got their answers back.
    expect(text(requests[1]!)).toContain("Find two facts");
    expect(text(requests[3]!)).toContain("Write it up");
    expect(text(requests[4]!)).toContain("A draft on tides.");
  });
});
