import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { localPolicy } from "../../../core/outbound/policy.ts";
import type { TaskOutcome } from "../../../core/task-assignment.ts";
import { runCrewaiTask, type CrewaiRuntimeDeps } from "../../../runner/crewai-runtime.ts";
import type { StepTask } from "../../../runner/step-recorder.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture } from "../../support/llm-fixture.ts";

// A whole CrewAI project's run (spec.runner.crew) as the runner carries it out, with the real CrewAI in the adapter
// against the OpenAI-compatible fixture: each task's steps are handed on as CrewAI emits them, every task's output is
// held to the 1 MiB limit, and a stop (SIGTERM, as `kubecrew runner` turns it into an abort) ends the run at once.

// A @CrewBase project of two sequential tasks, its researcher with a @tool function; Notes gives its first task
// output_json, so its result carries CrewAI's json_dict beside the raw answer.
const PROJECT = `from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task
from crewai.tools import tool
from pydantic import BaseModel


class Note(BaseModel):
    text: str


@tool("tide_table")
def tide_table(place: str) -> str:
    """The tide table of a place."""
    return f"HIGH TIDE AT {place.upper()}"


def researcher() -> Agent:
    return Agent(role="Tide Researcher", goal="Find facts about {topic}", backstory="Reads tables.", tools=[tide_table])


def writer() -> Agent:
    return Agent(role="Tide Writer", goal="Write about {topic}", backstory="Writes plainly.")


@CrewBase
class Duo:
    """Research, then a summary."""

    @agent
    def researcher(self) -> Agent:
        return researcher()

    @agent
    def writer(self) -> Agent:
        return writer()

    @task
    def research(self) -> Task:
        return Task(description="Research {topic}", expected_output="Facts", agent=self.researcher())

    @task
    def summary(self) -> Task:
        return Task(description="Summarise the research", expected_output="A paragraph", agent=self.writer())

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)


@CrewBase
class Notes:
    """Research as a JSON note, then a summary."""

    @agent
    def researcher(self) -> Agent:
        return researcher()

    @agent
    def writer(self) -> Agent:
        return writer()

    @task
    def research(self) -> Task:
        return Task(description="Research {topic}", expected_output="A note", agent=self.researcher(), output_json=Note)

    @task
    def summary(self) -> Task:
        return Task(description="Summarise the research", expected_output="A paragraph", agent=self.writer())

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
`;

let python: string;
let llm: LlmFixture;
let src: string;

beforeAll(async () => {
  python = crewaiPython();
  llm = await startLlmFixture();
  src = mkdtempSync(join(tmpdir(), "kubecrew-project-run-"));
  mkdirSync(join(src, "duo"));
  writeFileSync(join(src, "duo", "__init__.py"), "");
  writeFileSync(join(src, "duo", "crew.py"), PROJECT);
});
afterAll(async () => {
  await llm?.stop();
  if (src) rmSync(src, { recursive: true, force: true });
});
beforeEach(() => {
  llm.requests.length = 0;
});

interface Seen {
  at: number;
  step?: { kind: string; tool?: string; task?: StepTask };
  outcome?: TaskOutcome;
}

function runProject(crew: string, extra: Partial<CrewaiRuntimeDeps> = {}) {
  const seen: Seen[] = [];
  const assignment = testAssignment({
    llm: { provider: "openai-compatible", model: "llama3", baseURL: llm.baseURL },
    task: { index: 0, name: "research", description: "Research {topic}", expectedOutput: "Facts" },
    context: [],
    inputs: { topic: "tides" },
    runtime: "crewai",
    project: {
      crew,
      tasks: [
        { name: "research", index: 0 },
        { name: "summary", index: 1 },
      ],
    },
  });
  const outcome = runCrewaiTask(assignment, {
    python,
    env: { PATH: process.env.PATH, PYTHONPATH: src },
    policy: localPolicy,
    onStep: (step, _sofar, task) => seen.push({ at: Date.now(), step: { kind: step.kind, tool: step.tool, task } }),
    onTaskOutcome: async (o) => void seen.push({ at: Date.now(), outcome: o }),
    ...extra,
  });
  return { outcome, seen };
}

// `import crewai` alone takes seconds; on a busy machine a run takes tens of them.
describe("a whole project's run in the crewai runtime", { timeout: 240_000 }, () => {
  it("hands each task's steps on while the task runs, tagged with the task and its agent", async () => {
    llm.enqueue(
      toolCalls({ name: "tide_table", input: { place: "Brest" } }),
      // The research's answer takes 4 s: its first two steps must be out well before its result.
      answer("High tide at Brest.", undefined, 4000),
      answer("Tides are high at Brest."),
    );
    const { outcome, seen } = runProject("duo.crew:Duo");
    const last = await outcome;
    expect(last).toMatchObject({ taskName: "summary", taskIndex: 1, output: "Tides are high at Brest." });
    const researched = seen.find((s) => s.outcome?.taskName === "research")!;
    expect(researched.outcome).toMatchObject({ output: "High tide at Brest.", stepCount: 3, agent: "Tide Researcher" });
    const toolStep = seen.find((s) => s.step?.kind === "tool")!;
    expect(toolStep.step).toEqual({
      kind: "tool",
      tool: "tide_table",
      task: { name: "research", index: 0, agent: "Tide Researcher" },
    });
    expect(researched.at - toolStep.at).toBeGreaterThanOrEqual(3000);
    // Each step is handed on as its task's, before that task's result.
    const order = seen.map((s) => (s.step ? `step ${s.step.task?.name}` : `outcome ${s.outcome!.taskName}`));
    expect(order).toEqual([
      "step research",
      "step research",
      "step research",
      "outcome research",
      "step summary",
      "outcome summary",
    ]);
    expect(seen[4]!.step!.task).toEqual({ name: "summary", index: 1, agent: "Tide Writer" });
    // The fixture saw CrewAI's requests, the tool's answer among them.
    expect(JSON.stringify(llm.requests[1]!.body.messages)).toContain("HIGH TIDE AT BREST");
  });

  it("fails the first task when its output with its json_dict is above 1 MiB, and the run ends there", async () => {
    const text = "x".repeat(600_000);
    llm.enqueue(answer(JSON.stringify({ text })));
    const { outcome, seen } = runProject("duo.crew:Notes");
    const last = await outcome;
    const reported = seen.filter((s) => s.outcome).map((s) => s.outcome!);
    expect(reported.map((o) => [o.taskName, o.output, o.error])).toEqual([
      ["research", undefined, expect.stringMatching(/^Task output is 12000\d\d bytes, above the 1 MiB limit$/)],
    ]);
    expect(last).toMatchObject({ taskName: "research", taskIndex: 0, error: reported[0]!.error });
    expect(last.output).toBeUndefined();
    expect(last.jsonDict).toBeUndefined();
    // The summary never ran: the execution fails with the research, so the run ends there.
    expect(llm.requests).toHaveLength(1);
  });

  it("ends at once when stopped mid-project: the task running is the one stopped, the finished one keeps its result", async () => {
    llm.enqueue(answer("High tide at Brest."), answer("never delivered", undefined, 120_000));
    const stop = new AbortController();
    let stoppedAt = 0;
    // A grace far longer than the test waits: the adapter must end by itself, not by the runner's SIGKILL.
    const { outcome, seen } = runProject("duo.crew:Duo", {
      signal: stop.signal,
      graceMs: 60_000,
      onTaskOutcome: async (o) => {
        seen.push({ at: Date.now(), outcome: o });
        // Stopped while the summary's model call is in flight.
        const poll = setInterval(() => {
          if (llm.requests.length < 2) return;
          clearInterval(poll);
          stoppedAt = Date.now();
          stop.abort(new Error("Task interrupted by SIGTERM"));
        }, 100);
      },
    });
    const last = await outcome;
    const ended = Date.now();
    expect(stoppedAt).toBeGreaterThan(0);
    expect(llm.requests).toHaveLength(2);
    expect(ended - stoppedAt).toBeLessThan(3000);
    expect(seen.filter((s) => s.outcome).map((s) => [s.outcome!.taskName, s.outcome!.output])).toEqual([
      ["research", "High tide at Brest."],
    ]);
    expect(last).toMatchObject({ taskName: "summary", taskIndex: 1, error: "Task interrupted by SIGTERM" });
    expect(last.output).toBeUndefined();
  });
});
