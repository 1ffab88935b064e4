import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAssignment } from "../../../core/assignment.ts";
import { crewSpec } from "../../../core/crew-resource.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { runTask } from "../../../runner/run-task.ts";
import { crewaiPython } from "../../support/crewai.ts";
import {
  answer,
  startLlmFixture,
  toolCalls,
  toolsOffered,
  type LlmFixture,
  type RecordedRequest,
} from "../../support/llm-fixture.ts";

// One hierarchical crew (a manager over a researcher and a writer, one task for the manager) run by the real CrewAI
// (the pinned package, Process.hierarchical with manager_llm) and by kubecrew's runner, both against the LLM fixture:
// each offers the manager a delegation tool whose coworker argument takes the agents' roles, and the coworker's own
// LLM call receives the work handed over.
const run = promisify(execFile);
let llm: LlmFixture;
let python: string;

const WORK = "Find two facts about tides";
const CONTEXT = "For a short article";

beforeAll(async () => {
  llm = await startLlmFixture();
  python = crewaiPython();
}, 120_000);
afterAll(() => llm?.stop());

const crewaiEnv = {
  ...process.env,
  CREWAI_DISABLE_TELEMETRY: "true",
  OTEL_SDK_DISABLED: "true",
  OPENAI_API_KEY: "sk-test",
};

/** A name as CrewAI's native tool calling sends it, from the package itself. */
async function crewaiToolName(name: string): Promise<string> {
  const code = `import sys\nfrom crewai.utilities.agent_utils import sanitize_tool_name\nprint(sanitize_tool_name(sys.argv[1]))`;
  return (await run(python, ["-c", code, name], { env: crewaiEnv })).stdout.trim();
}

/** CrewAI's own delegation tool's name, read from the package (kubecrew keeps none of its texts). */
async function crewaiDelegateTool(): Promise<string> {
  const code = [
    "from crewai import Agent, LLM",
    "from crewai.tools.agent_tools.agent_tools import AgentTools",
    "a = Agent(role='R', goal='g', backstory='b', llm=LLM(model='openai/x', base_url='http://127.0.0.1:9', api_key='k'))",
    "print(AgentTools(agents=[a]).tools()[0].name)",
  ].join("\n");
  return crewaiToolName((await run(python, ["-c", code], { env: crewaiEnv })).stdout.trim());
}

const SCRIPT = `
import sys
from crewai import Agent, Crew, LLM, Process, Task
base = sys.argv[1]
worker = LLM(model="openai/test-model", base_url=base, api_key="sk-test")
manager = LLM(model="openai/manager-model", base_url=base, api_key="sk-test")
researcher = Agent(role="Researcher", goal="Find facts on tides", backstory="Reads a lot.", llm=worker)
writer = Agent(role="Writer", goal="Write plainly", backstory="Writes well.", llm=worker)
task = Task(description="Write a short article on tides", expected_output="One paragraph")
crew = Crew(agents=[researcher, writer], tasks=[task], process=Process.hierarchical, manager_llm=manager)
print(crew.kickoff().raw)
`;

const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);

/** The coworker argument's roles, whether an enum (kubecrew) or named in the tool's texts (CrewAI). */
function offersRoles(r: RecordedRequest, tool: string): boolean {
  const offered = toolsOffered(r.body).find((t) => t.name === tool);
  if (!offered) return false;
  const coworker = (offered.schema.properties as Record<string, unknown>).coworker;
  const said = `${offered.description ?? ""} ${JSON.stringify(coworker)}`;
  return coworker !== undefined && said.includes("Researcher") && said.includes("Writer");
}

describe("the hierarchical process in CrewAI and in kubecrew", () => {
  it("CrewAI: the manager is offered a delegation tool over the roles; the coworker's call receives the work", async () => {
    const tool = await crewaiDelegateTool();
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: tool, input: { task: WORK, context: CONTEXT, coworker: "Researcher" } }),
      answer("Tides follow the moon. There are two a day."),
      answer("The moon pulls the sea, twice a day."),
    );
    const { stdout } = await run(python, ["-c", SCRIPT, llm.baseURL], { env: crewaiEnv, timeout: 120_000 });
    expect(stdout).toContain("The moon pulls the sea, twice a day.");
    const requests = llm.requests.slice(from);
    expect(requests[0]!.body.model).toBe("manager-model");
    expect(offersRoles(requests[0]!, tool)).toBe(true);
    expect(requests[1]!.body.model).toBe("test-model");
    expect(text(requests[1]!)).toContain(WORK);
    expect(text(requests[1]!)).toContain("Researcher");
  }, 180_000);

  it("kubecrew: the same crew, the same two facts", async () => {
    const spec = crewSpec.parse({
      llm: { provider: "openai-compatible", model: "test-model", baseURL: llm.baseURL },
      process: "hierarchical",
      managerLlm: { provider: "openai-compatible", model: "manager-model", baseURL: llm.baseURL },
      agents: [
        { name: "researcher", role: "Researcher", goal: "Find facts on tides", backstory: "Reads a lot." },
        { name: "writer", role: "Writer", goal: "Write plainly", backstory: "Writes well." },
      ],
      tasks: [{ name: "article", description: "Write a short article on tides", expectedOutput: "One paragraph" }],
    });
    const execution = { name: "compare", spec: { crewRef: { name: "tides" }, inputs: {} } };
    const assignment = buildAssignment({ execution, observed: {} } as never, spec, 0);
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: "delegate_work", input: { coworker: "Researcher", task: WORK, context: CONTEXT } }),
      answer("Tides follow the moon. There are two a day."),
      answer("The moon pulls the sea, twice a day."),
    );
    const outcome = await runTask(assignment, {
      env: { KUBECREW_OPENAI_COMPATIBLE_API_KEY: "sk-test" },
      fetch: createOutboundClient(localPolicy).fetch,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toBe("The moon pulls the sea, twice a day.");
    const requests = llm.requests.slice(from);
    expect(requests[0]!.body.model).toBe("manager-model");
    expect(offersRoles(requests[0]!, "delegate_work")).toBe(true);
    expect(requests[1]!.body.model).toBe("test-model");
    expect(text(requests[1]!)).toContain(WORK);
    expect(text(requests[1]!)).toContain("Researcher");
    expect(outcome.steps?.find((s) => s.kind === "delegation")).toMatchObject({ coworker: "Researcher", input: WORK });
  }, 60_000);
});
