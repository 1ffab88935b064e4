import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";
import type { AssignedMcpServer } from "../../../core/task-tools.ts";
import type { TaskAssignment, TaskOutcome } from "../../../core/task-assignment.ts";
import { runCrewaiTask } from "../../../runner/crewai-runtime.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";

// The runner's side of a crew the crewai runtime runs whole: each agent's MCP servers go to the adapter by agent name,
// their header values resolved and redacted, and every connection goes through the runner's egress proxy, so a server
// the outbound URL policy refuses fails the run with the policy's own words.
const SECRET = "mcp-header-secret-for-the-whole-run-0123";
let python: string;
let llm: LlmFixture;

beforeAll(async () => {
  python = crewaiPython();
  llm = await startLlmFixture();
});
afterAll(async () => {
  await llm?.stop();
});

/** A hierarchical crew's one run: CrewAI's manager around the assignment's model, and a researcher with `servers`. */
function wholeRun(servers: AssignedMcpServer[]): TaskAssignment {
  const llmConfig: LlmConfig = { provider: "openai-compatible", model: "llama3", baseURL: llm.baseURL };
  const base = testAssignment({ llm: llmConfig });
  const researcher = { ...base.agent, name: "researcher", role: "Researcher", mcps: servers.map((s) => s.name) };
  return {
    ...base,
    runtime: "crewai",
    context: [],
    task: { index: 0, name: "facts", description: "Find facts", expectedOutput: "Facts" },
    agent: { ...base.agent, name: "manager", role: "Crew Manager" },
    project: {
      declared: {
        process: "hierarchical",
        manager: "llm",
        tasks: [{ name: "facts", description: "Find facts", expectedOutput: "Facts", agent: "researcher" }],
      },
      tasks: [{ name: "facts", index: 0 }],
    },
    coworkers: [{ agent: researcher, tools: { mcpServers: servers, allowedHosts: [] } }],
  };
}

describe("a whole run's agents' MCP servers", { timeout: 240_000 }, () => {
  it("are reached through the egress proxy: a refused one fails the run with the policy's message", async () => {
    const reported: TaskOutcome[] = [];
    const outcome = await runCrewaiTask(
      wholeRun([
        {
          name: "imds",
          url: "http://169.254.169.254/mcp",
          transport: "streamable-http",
          headers: [{ name: "Authorization", value: `Bearer ${SECRET}` }],
          timeoutSeconds: 5,
        },
      ]),
      {
        python,
        env: { PATH: process.env.PATH, KUBECREW_OPENAI_COMPATIBLE_API_KEY: "sk-test-key-0123456789" },
        policy: localPolicy,
        onTaskOutcome: async (o) => void reported.push(o),
      },
    );
    expect(outcome.error).toContain('agent "researcher": MCP server "imds" (http://169.254.169.254/mcp)');
    expect(outcome.error).toContain(
      "(refused by the outbound URL policy: 169.254.169.254 is a cloud metadata address; calls to it are refused)",
    );
    expect(reported.map((o) => [o.taskName, o.error])).toEqual([["facts", outcome.error]]);
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(llm.requests).toHaveLength(0);
  });
});
