/**
 * The table of CrewAI crew definitions (CrewDefinition, inline) the conformance test gives CrewAI and kubecrew:
 * what CrewAI does with each (checked against the pinned package, so a wrong row fails), and, where CrewAI accepts
 * what kubecrew cannot honour, the fields kubecrew refuses.
 */
export interface Row {
  id: string;
  doc: Record<string, unknown>;
  format?: "yaml" | "json";
  crewai: "accepts" | "refuses";
  /** Fields kubecrew refuses (each in a line with what to do instead) although CrewAI accepts them. */
  unsupported?: string[];
  /**
   * Whether CrewAI builds the Crew after validating it (default true). False where building needs the project's
   * own Python (a tool class, a model, a callback) or a service: the JSON-first validation, which runs no code, judges.
   */
  build?: boolean;
}

const writer = { role: "{topic} writer", goal: "Write about {topic}", backstory: "Writes plainly." };
const editor = { role: "Editor", goal: "Edit for {audience}", backstory: "Cuts what is not needed." };
const task = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `Do the ${name} on {topic}.`,
  expected_output: `The ${name}.`,
  agent: "writer",
  ...extra,
});
const crew = (
  extra: Record<string, unknown> = {},
  writerExtra: Record<string, unknown> = {},
  tasks: Record<string, unknown>[] = [task("draft")],
) => ({
  agents: { writer: { ...writer, ...writerExtra } },
  tasks,
  ...extra,
});
const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"] };

export const conformanceTable: Row[] = [
  // Accepted by both; what kubecrew imports is compared with what CrewAI builds.
  { id: "minimal", doc: crew(), crewai: "accepts" },
  {
    id: "agents-as-list",
    doc: {
      agents: [{ name: "writer", ...writer }, { editor }],
      tasks: [task("draft"), task("edit", { agent: "editor" })],
    },
    crewai: "accepts",
  },
  {
    id: "context-and-async",
    format: "json",
    doc: {
      agents: { writer, editor },
      tasks: [
        task("market", { async_execution: true }),
        task("tech", { async_execution: true }),
        task("brief", { agent: "editor", context: ["market", "tech"] }),
        task("summary", { context: [] }),
      ],
      inputs: { audience: "engineers" },
    },
    crewai: "accepts",
  },
  {
    id: "models",
    doc: {
      agents: {
        writer: { ...writer, llm: { model: "openai/gpt-4o-mini", temperature: 0.1, max_tokens: 500 } },
        editor: { ...editor, llm: "anthropic/claude-sonnet-4-5", max_iter: 4 },
        local: { role: "Local", goal: "Answer", backstory: "Runs nearby.", llm: "ollama/llama3.1" },
      },
      tasks: [task("draft"), task("edit", { agent: "editor" }), task("check", { agent: "local" })],
    },
    crewai: "accepts",
  },
  {
    id: "mcp-servers-and-apps",
    doc: crew(
      {},
      {
        mcps: [
          "https://mcp.example.com/mcp#search",
          { url: "https://tickets.example.com/sse", headers: { "X-Team": "a" }, streamable: false },
        ],
        apps: ["gmail", "google_calendar/list_events"],
      },
    ),
    crewai: "accepts",
  },
  {
    id: "fields-that-ask-for-nothing",
    doc: crew(
      { memory: false, planning: false, process: "sequential", knowledge_sources: [] },
      { allow_delegation: false, tools: [], type: "Agent", settings: { max_iter: 9 } },
      [task("draft", { human_input: false, async_execution: false, output_pydantic: null, type: "task", tools: [] })],
    ),
    crewai: "accepts",
  },
  {
    id: "fields-kubecrew-does-without",
    doc: crew({ verbose: true, cache: true, max_rpm: 30 }, { verbose: true, max_rpm: 10 }, [
      task("draft", { output_file: "draft.md" }),
    ]),
    crewai: "accepts",
  },
  { id: "task-without-name", doc: crew({}, {}, [task("draft"), { ...task("x"), name: undefined }]), crewai: "accepts" },
  {
    id: "hierarchical-process",
    doc: crew({ process: "hierarchical", manager_llm: "openai/gpt-4o" }),
    crewai: "accepts",
  },
  { id: "delegation", doc: crew({}, { allow_delegation: true }), crewai: "accepts" },

  // Refused by both.
  { id: "no-agents", doc: { agents: {}, tasks: [task("draft")] }, crewai: "refuses" },
  { id: "no-tasks", doc: { agents: { writer }, tasks: [] }, crewai: "refuses" },
  {
    id: "missing-expected-output",
    doc: crew({}, {}, [{ name: "draft", description: "Draft it", agent: "writer" }]),
    crewai: "refuses",
  },
  {
    id: "missing-backstory",
    doc: { agents: { writer: { role: "W", goal: "G" } }, tasks: [task("draft")] },
    crewai: "refuses",
  },
  { id: "unknown-agent", doc: crew({}, {}, [task("draft", { agent: "ghost" })]), crewai: "refuses" },
  { id: "context-on-a-later-task", doc: crew({}, {}, [task("a", { context: ["b"] }), task("b")]), crewai: "refuses" },
  {
    id: "context-on-an-unknown-task",
    doc: crew({}, {}, [task("a"), task("b", { context: ["zz"] })]),
    crewai: "refuses",
  },
  { id: "unknown-agent-field", doc: crew({}, { rol: "typo" }), crewai: "refuses" },
  { id: "unknown-task-field", doc: crew({}, {}, [task("draft", { asynchronous: true })]), crewai: "refuses" },
  { id: "unknown-crew-field", doc: crew({ planing: true }), crewai: "refuses" },
  { id: "run-time-field", doc: crew({}, {}, [task("draft", { output: "done" })]), crewai: "refuses" },
  {
    id: "two-asynchronous-tasks-last",
    doc: crew({}, {}, [task("a"), task("b", { async_execution: true }), task("c", { async_execution: true })]),
    crewai: "refuses",
  },
  {
    id: "asynchronous-context-on-its-neighbour",
    doc: crew({}, {}, [
      task("a", { async_execution: true }),
      task("b", { async_execution: true, context: ["a"] }),
      task("c"),
    ]),
    crewai: "refuses",
  },
  { id: "hierarchical-without-manager", doc: crew({ process: "hierarchical" }), crewai: "refuses" },
  {
    id: "sequential-task-without-agent",
    doc: crew({}, {}, [{ ...task("draft"), agent: undefined }]),
    crewai: "refuses",
  },
  { id: "malformed-python-reference", doc: crew({ step_callback: { python: "nodots" } }), crewai: "refuses" },
  {
    id: "agent-entry-without-name",
    doc: { agents: [{ role: "W", goal: "G", backstory: "B", llm: "openai/gpt-4o" }], tasks: [task("draft")] },
    crewai: "refuses",
  },
  { id: "inputs-not-a-mapping", doc: crew({ inputs: ["topic"] }), crewai: "refuses" },
  { id: "llm-without-model", doc: crew({}, { llm: { temperature: 0.2 } }), crewai: "refuses" },
  { id: "task-not-a-mapping", doc: { agents: { writer }, tasks: ["draft"] }, crewai: "refuses" },
  {
    id: "two-structured-outputs",
    doc: crew({}, {}, [task("draft", { output_json: schema, output_pydantic: schema })]),
    crewai: "refuses",
  },
  { id: "task-without-agent", doc: crew({}, {}, [{ ...task("draft"), agent: undefined }]), crewai: "refuses" },

  // Accepted by CrewAI; kubecrew refuses these fields, each with what to do instead.
  { id: "crew-memory", doc: crew({ memory: true }), crewai: "accepts", unsupported: ["memory"], build: false },
  {
    id: "knowledge-sources",
    doc: crew({}, { knowledge_sources: [{ python: "project.knowledge.Handbook" }] }),
    crewai: "accepts",
    unsupported: ["knowledge_sources"],
    build: false,
  },
  {
    id: "python-tool-classes",
    doc: crew({}, { tools: ["SerperDevTool", "crewai_tools:ScrapeWebsiteTool"] }),
    crewai: "accepts",
    unsupported: ["tools"],
    build: false,
  },
  {
    id: "pydantic-output",
    doc: crew({}, {}, [task("draft", { output_pydantic: { python: "project.models.Draft" } })]),
    crewai: "accepts",
    unsupported: ["output_pydantic"],
    build: false,
  },
  {
    id: "callbacks",
    doc: crew(
      { task_callback: { python: "project.hooks.on_task" } },
      { step_callback: { python: "project.hooks.on_step" } },
    ),
    crewai: "accepts",
    unsupported: ["task_callback", "step_callback"],
    build: false,
  },
  {
    id: "other-providers",
    doc: crew({}, { llm: "gemini/gemini-2.0-flash" }),
    crewai: "accepts",
    unsupported: ["llm"],
    build: false,
  },
  {
    id: "agent-time-limit",
    doc: crew({}, { max_execution_time: 300 }),
    crewai: "accepts",
    unsupported: ["max_execution_time"],
  },
  { id: "planning", doc: crew({ planning: true }), crewai: "accepts", unsupported: ["planning"] },
  {
    id: "amp-mcp-integration",
    doc: crew({}, { mcps: ["snowflake"] }),
    crewai: "accepts",
    unsupported: ["mcps"],
    build: false,
  },
  {
    id: "key-in-the-definition",
    doc: crew({}, { llm: { model: "openai/gpt-4o", api_key: "sk-test-not-a-key" } }),
    crewai: "accepts",
    unsupported: ["api_key"],
  },
  { id: "injected-date", doc: crew({}, { inject_date: true }), crewai: "accepts", unsupported: ["inject_date"] },
  {
    id: "markdown",
    doc: crew({}, {}, [task("draft", { markdown: true })]),
    crewai: "accepts",
    unsupported: ["markdown"],
  },
  {
    id: "one-name-for-two-tasks",
    doc: crew({}, {}, [task("draft"), task("draft")]),
    crewai: "accepts",
    unsupported: ["name"],
  },
  {
    id: "conditional-task",
    doc: crew({}, {}, [
      task("a"),
      task("b", { type: "ConditionalTask", condition: { python: "project.rules.needed" } }),
    ]),
    crewai: "accepts",
    unsupported: ["type", "condition"],
    build: false,
  },
  // Structured outputs, guardrails and human input: carried.
  { id: "structured-output", doc: crew({}, {}, [task("draft", { output_json: schema })]), crewai: "accepts" },
  {
    id: "pydantic-output-as-schema",
    doc: crew({}, {}, [task("draft", { output_pydantic: schema })]),
    crewai: "accepts",
  },
  {
    id: "guardrails",
    doc: crew({}, {}, [
      task("draft", { guardrail: "Cite a source for every claim.", guardrail_max_retries: 2 }),
      task("edit", { guardrails: ["Keep it under 200 words.", "No jargon."] }),
    ]),
    crewai: "accepts",
  },
  { id: "human-input", doc: crew({}, {}, [task("draft", { human_input: true })]), crewai: "accepts" },
  {
    id: "python-guardrail",
    doc: crew({}, {}, [task("draft", { guardrail: { python: "project.checks.cited" } })]),
    crewai: "accepts",
    unsupported: ["guardrail"],
    build: false,
  },
];
