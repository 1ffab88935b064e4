import type { LlmConfig } from "../core/crew.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";

/** A small valid assignment for tests; `llm` and any field can be replaced. */
export function testAssignment(overrides: { llm?: LlmConfig | null } & Partial<TaskAssignment> = {}): TaskAssignment {
  const { llm, ...rest } = overrides;
  return {
    execution: { id: "0b7e8a52-5d6c-4f1e-9a3b-2c1d0e9f8a7b", crew: "research" },
    task: {
      index: 1,
      name: "write",
      description: "Write a short article about AI agents.",
      expectedOutput: "Three paragraphs in markdown.",
    },
    agent: {
      name: "writer",
      role: "Senior Writer",
      goal: "Explain AI agents clearly",
      backstory: "You have written for technical magazines for ten years.",
      llm: llm === null ? undefined : (llm ?? { provider: "mock", model: "mock" }),
      tools: [],
      mcps: [],
      apps: [],
      maxIter: 20,
    },
    context: [{ task: "research", output: "Agents plan, act and observe." }],
    inputs: { topic: "AI agents" },
    tools: { mcpServers: [], allowedHosts: [] },
    runtime: "kubecrew",
    ...rest,
  };
}
