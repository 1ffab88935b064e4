import { describe, expect, it } from "vitest";
import { inlineDefinition } from "./definition.ts";
import { Findings } from "./findings.ts";
import { importCrewAI, type ImportOptions } from "./import-crew.ts";

const agent = { role: "Writer on {topic}", goal: "Write about {topic}", backstory: "Writes well." };
const task = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `Do ${name} on {topic}`,
  expected_output: `The ${name}`,
  agent: "writer",
  ...extra,
});
const crewOf = (extra: Record<string, unknown> = {}, agentExtra: Record<string, unknown> = {}) => ({
  agents: { writer: { ...agent, ...agentExtra } },
  tasks: [task("draft")],
  ...extra,
});

function imported(doc: unknown, options: ImportOptions = {}) {
  const findings = new Findings();
  const definition = inlineDefinition({ file: "crew.yaml", value: doc }, "my_crew", findings);
  if (!definition) return { ok: false as const, problems: findings.problems, notes: findings.notes };
  return importCrewAI(definition, options, findings);
}

function manifest(doc: unknown, options: ImportOptions = {}) {
  const result = imported(doc, options);
  if (!result.ok) throw new Error(`refused:\n${result.problems.join("\n")}`);
  return result;
}

function problems(doc: unknown): string[] {
  const result = imported(doc);
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems;
}

describe("importCrewAI: what is carried", () => {
  it("writes a Crew with CrewAI's fields under kubecrew's names, inputs from defaults and placeholders", () => {
    const { manifest: m, crew } = manifest(
      {
        name: "Release Notes",
        agents: {
          writer: { ...agent, llm: "openai/gpt-4o-mini", max_iter: 7 },
          editor: { role: "Editor", goal: "Edit for {audience}", backstory: "" },
        },
        tasks: [
          task("draft", { async_execution: true }),
          task("facts", { async_execution: true }),
          task("edit", { agent: "editor", context: ["draft", "facts"] }),
        ],
        inputs: { audience: "users", depth: { level: 2 } },
        process: "sequential",
      },
      { namespace: "team-a" },
    );
    expect(m).toEqual({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Crew",
      metadata: { name: "release-notes", namespace: "team-a" },
      spec: {
        inputs: [{ name: "audience", default: "users" }, { name: "depth", default: { level: 2 } }, { name: "topic" }],
        agents: [
          { name: "writer", ...agent, llm: { provider: "openai", model: "gpt-4o-mini" }, maxIter: 7 },
          { name: "editor", role: "Editor", goal: "Edit for {audience}", backstory: "", maxIter: 25 },
        ],
        tasks: [
          {
            name: "draft",
            description: "Do draft on {topic}",
            expectedOutput: "The draft",
            agent: "writer",
            asyncExecution: true,
          },
          {
            name: "facts",
            description: "Do facts on {topic}",
            expectedOutput: "The facts",
            agent: "writer",
            asyncExecution: true,
          },
          {
            name: "edit",
            description: "Do edit on {topic}",
            expectedOutput: "The edit",
            agent: "editor",
            context: ["draft", "facts"],
          },
        ],
        process: "sequential",
      },
    });
    // The schema's own defaults and rules hold for what was written.
    expect(crew.spec.runtime).toBe("kubecrew");
    expect(crew.spec.tasks[2]!.asyncExecution).toBe(false);
  });

  it("names the crew by --name, else its name, else the file's stem; refuses a name nothing usable is left of", () => {
    expect(manifest(crewOf()).manifest.metadata.name).toBe("my-crew");
    expect(manifest(crewOf({ name: "__Daily  Digest__" })).manifest.metadata.name).toBe("daily-digest");
    expect(manifest(crewOf({ name: "x" }), { name: "chosen" }).manifest.metadata.name).toBe("chosen");
    expect(problems(crewOf({ name: "!!!" }))).toEqual([
      "crew.yaml: name: makes no crew name (lowercase letters, digits and '-'): give one with --name",
    ]);
  });

  it("maps models: provider/model strings, bare model families, Ollama and OpenAI-compatible servers, settings", () => {
    const llm = (value: unknown, extra: Record<string, unknown> = {}) =>
      manifest(crewOf({}, { llm: value, ...extra })).manifest.spec.agents[0]!.llm;
    expect(llm("anthropic/claude-sonnet-4-5")).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(llm("gpt-4o")).toEqual({ provider: "openai", model: "gpt-4o" });
    expect(llm("claude-3-5-haiku-latest")).toEqual({ provider: "anthropic", model: "claude-3-5-haiku-latest" });
    expect(llm("ollama/llama3.1")).toEqual({
      provider: "openai-compatible",
      model: "llama3.1",
      baseURL: "http://localhost:11434/v1",
    });
    expect(llm({ model: "llama3", provider: "ollama", base_url: "http://ollama:11434/" })).toEqual({
      provider: "openai-compatible",
      model: "llama3",
      baseURL: "http://ollama:11434/v1",
    });
    expect(llm({ model: "openai/qwen", base_url: "http://vllm:8000/v1", temperature: 0.3, max_tokens: 900 })).toEqual({
      provider: "openai",
      model: "qwen",
      baseURL: "http://vllm:8000/v1",
      temperature: 0.3,
      maxOutputTokens: 900,
    });
    // The agent's max_tokens caps its model's answers.
    expect(llm("openai/gpt-4o", { max_tokens: 512 })).toEqual({
      provider: "openai",
      model: "gpt-4o",
      maxOutputTokens: 512,
    });
  });

  it("carries MCP servers and apps: URLs as they are, written-out servers into spec.mcpServers, platform tools as apps", () => {
    const { manifest: m } = manifest(
      crewOf(
        {},
        {
          tools: ["platform:notion"],
          apps: ["gmail/send_email", "notion"],
          mcps: [
            "https://mcp.example.com/mcp#search",
            { url: "https://tickets.example.com/sse", headers: { "X-Team": "a" }, streamable: false },
          ],
        },
      ),
    );
    expect(m.spec.mcpServers).toEqual([
      {
        name: "writer-mcp-2",
        url: "https://tickets.example.com/sse",
        transport: "sse",
        headers: [{ name: "X-Team", value: "a" }],
      },
    ]);
    expect(m.spec.agents[0]).toMatchObject({
      mcps: ["https://mcp.example.com/mcp#search", "writer-mcp-2"],
      apps: ["notion", "gmail/send_email"],
    });
  });

  it("accepts a field that asks for nothing, and notes one kubecrew does without (results unchanged)", () => {
    const result = manifest(
      crewOf(
        { memory: false, planning: false, verbose: true, max_rpm: null, knowledge_sources: [] },
        { allow_delegation: false, settings: { verbose: true }, max_rpm: 10, type: "Agent" },
      ),
    );
    expect(result.notes).toEqual([
      "crew.yaml: verbose: kubecrew records every step of every task whatever this says (kubecrew logs, /status/{id}/events)",
      "crew.yaml: agents.writer.settings.verbose: kubecrew records every step of every task whatever this says (kubecrew logs, /status/{id}/events)",
      "crew.yaml: agents.writer.max_rpm: kubecrew does not pace LLM calls per minute; it retries a call the provider refuses with 429",
    ]);
  });

  it("carries structured outputs written as JSON Schemas, guardrails in words, their retries and human input", () => {
    const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };
    const result = manifest({
      agents: { writer: agent },
      tasks: [
        task("draft", {
          output_json: schema,
          guardrail: "Cite a source.",
          guardrail_max_retries: 2,
          human_input: true,
        }),
        task("edit", { output_pydantic: schema, guardrails: ["Under 200 words.", "No jargon."], guardrail: "Unused." }),
        task("check", { max_retries: 1, human_input: false }),
      ],
    });
    const [draft, edit, check] = result.crew.spec.tasks;
    expect(draft).toMatchObject({
      outputJson: schema,
      guardrail: "Cite a source.",
      guardrailMaxRetries: 2,
      humanInput: true,
    });
    expect(edit).toMatchObject({
      outputJson: schema,
      guardrails: [{ llm: "Under 200 words." }, { llm: "No jargon." }],
    });
    expect(edit!.guardrail).toBeUndefined();
    // Retries without anything to check change nothing, in CrewAI too: the import leaves them out.
    expect(check).toMatchObject({ humanInput: false });
    expect(result.manifest.spec.tasks[2]).not.toHaveProperty("guardrailMaxRetries");
    expect(result.notes).toEqual([
      "crew.yaml: tasks[1].output_pydantic: kubecrew reports the object as json_dict",
      "crew.yaml: tasks[1].guardrail: not checked: CrewAI checks only guardrails when both are set, and so does the import",
    ]);
  });

  it("names a task without a name by its place, and says so", () => {
    const { name: _name, ...nameless } = task("x");
    const result = manifest({ agents: { writer: agent }, tasks: [task("first"), nameless] });
    expect(result.manifest.spec.tasks.map((t) => t.name)).toEqual(["first", "task_2"]);
    expect(result.notes).toEqual([
      'crew.yaml: tasks[1]: a task without a name: named "task_2" (the task_id of its result)',
    ]);
  });
});

describe("importCrewAI: what is refused, each with what to do instead", () => {
  it("refuses what kubecrew cannot honour, naming every field at once", () => {
    const lines = problems({
      agents: {
        writer: {
          ...agent,
          tools: ["SerperDevTool", { name: "custom" }],
          knowledge_sources: [{ python: "kb.sources.Docs" }],
          memory: true,
          step_callback: { python: "hooks.on_step" },
          llm: "gemini/gemini-2.0-flash",
        },
      },
      tasks: [task("draft", { output_pydantic: { python: "models.Report" }, guardrail: { python: "checks.kind" } })],
      memory: true,
      process: "hierarchical",
      manager_llm: "openai/gpt-4o",
    });
    const fields = lines.map((l) => l.split(": ").slice(0, 2).join(": "));
    expect(fields).toEqual([
      "crew.yaml: memory",
      "crew.yaml: agents.writer.knowledge_sources",
      "crew.yaml: agents.writer.memory",
      "crew.yaml: agents.writer.step_callback",
      "crew.yaml: agents.writer.llm",
      "crew.yaml: agents.writer.tools[0]",
      "crew.yaml: agents.writer.tools[1]",
      "crew.yaml: tasks[0].output_pydantic",
      "crew.yaml: tasks[0].guardrail",
    ]);
    const line = (field: string) => lines.find((l) => l.startsWith(`crew.yaml: ${field}:`))!;
    expect(line("agents.writer.knowledge_sources")).toMatch(/MCP server.*crewai runtime/);
    expect(line("agents.writer.tools[0]")).toMatch(/"SerperDevTool" is Python.*list it in mcps.*crewai runtime/);
    expect(line("agents.writer.step_callback")).toMatch(/stepWebhookUrl/);
    expect(line("agents.writer.llm")).toMatch(/OpenAI-compatible proxy/);
  });

  it("refuses what CrewAI refuses: unknown fields, missing texts and agents, context on later or unknown tasks", () => {
    expect(
      problems({
        agents: { writer: { ...agent, rol: "x" } },
        tasks: [
          task("a", { context: ["b"], async: true }),
          task("b", { agent: "ghost" }),
          { name: "c", description: "Only this", agent: "writer" },
          task("d", { context: ["nope"] }),
        ],
        planing: true,
      }),
    ).toEqual([
      "crew.yaml: planing: CrewAI's crew has no such field",
      "crew.yaml: agents.writer.rol: CrewAI's agent has no such field",
      "crew.yaml: tasks[0].async: CrewAI's task has no such field",
      'crew.yaml: tasks[0].context: names "b", which is not a task defined before this one',
      'crew.yaml: tasks[1].agent: names agent "ghost", which the crew does not define',
      "crew.yaml: tasks[2].expected_output: is required",
      'crew.yaml: tasks[3].context: names "nope", which is not a task defined before this one',
    ]);
    expect(problems({ agents: {}, tasks: [task("a")] })).toEqual([
      "crew.yaml: agents: defines no agent",
      'crew.yaml: tasks[0].agent: names agent "writer", which the crew does not define',
    ]);
    expect(problems({ agents: { writer: agent }, tasks: [] })).toEqual([
      "crew.yaml: tasks: must be a non-empty list of tasks",
    ]);
  });

  it("refuses CrewAI's asynchronous-task rules through kubecrew's own Crew rules", () => {
    const lines = problems({
      agents: { writer: agent },
      tasks: [task("a"), task("b", { async_execution: true }), task("c", { async_execution: true })],
    });
    expect(lines).toEqual([
      'crew.yaml: the crew ends with 2 asynchronous tasks ("b", "c"): at most one asynchronous task may come last',
    ]);
  });

  it("refuses checks kubecrew cannot run: a schema of no object, a Python guardrail, too many retries", () => {
    expect(
      problems({
        agents: { writer: agent },
        tasks: [
          task("a", { output_json: { type: "array" } }),
          task("b", { guardrails: ["Short.", { python: "checks.short" }], guardrail_max_retries: 11 }),
        ],
      }),
    ).toEqual([
      "crew.yaml: tasks[1].guardrails[1]: a Python guardrail function: it needs Python, which the kubecrew runtime does not run: remove it, or deploy the crew on the crewai runtime with an image holding your project",
    ]);
    expect(
      problems({ agents: { writer: agent }, tasks: [task("b", { guardrail: "Short.", guardrail_max_retries: 11 })] }),
    ).toEqual(["crew.yaml: tasks[0].guardrail_max_retries: kubecrew retries a task's checks at most 10 times"]);
    expect(problems({ agents: { writer: agent }, tasks: [task("a", { output_json: { type: "array" } })] })).toEqual([
      'crew.yaml: task "a": outputJson must describe an object (type: object), as CrewAI\'s json_dict is one',
    ]);
  });

  it("refuses an API key written into the definition, and two tasks of one name", () => {
    expect(problems(crewOf({}, { llm: { model: "openai/gpt-4o", api_key: "sk-123" } }))).toEqual([
      expect.stringMatching(
        /^crew\.yaml: agents\.writer\.llm\.api_key: a key written into the definition: put it in a Secret/,
      ),
    ]);
    expect(problems({ agents: { writer: agent }, tasks: [task("a"), task("a")] })).toEqual([
      'crew.yaml: tasks[1].name: another task is named "a": kubecrew reports each task by its name',
    ]);
  });
});

describe("importCrewAI: the hierarchical process", () => {
  it("carries process, manager_llm and allow_delegation; a task may leave its agent to the manager", () => {
    const { agent: _agent, ...unassigned } = task("draft");
    const result = manifest({
      agents: { writer: { ...agent, allow_delegation: true } },
      tasks: [unassigned, task("edit")],
      process: "hierarchical",
      manager_llm: "openai/gpt-4o",
    });
    expect(result.manifest.spec).toMatchObject({
      process: "hierarchical",
      managerLlm: { provider: "openai", model: "gpt-4o" },
      agents: [{ name: "writer", allowDelegation: true }],
    });
    expect(result.manifest.spec.tasks[0]).not.toHaveProperty("agent");
    expect(result.crew.spec.tasks[1]!.agent).toBe("writer");
  });

  it("refuses a manager_agent that is no JSON-first agent file (CrewAI refuses an inline one too)", () => {
    const boss = { role: "Lead", goal: "Lead the crew", backstory: "Led many." };
    expect(
      problems({ agents: { writer: agent }, tasks: [task("draft")], process: "hierarchical", manager_agent: boss }),
    ).toEqual([
      "crew.yaml: manager_agent: must name an agent definition of a JSON-first project (agents/<name>.jsonc); here: use manager_llm",
    ]);
  });

  it("refuses a hierarchical crew without a manager, as CrewAI does", () => {
    expect(problems({ agents: { writer: agent }, tasks: [task("draft")], process: "hierarchical" })).toEqual([
      "crew.yaml: process: the hierarchical process needs a manager: set manager_llm or manager_agent",
    ]);
  });
});
