/**
 * What becomes of each field of CrewAI's Agent, Task and Crew when a crew is imported onto the kubecrew runtime. Every
 * field CrewAI's models have is listed (a test compares these tables with the models of the pinned crewai package), so
 * none is dropped without a word:
 * - `carried`: the importer maps it to the Crew (agent.ts, task.ts, import-crew.ts);
 * - otherwise a value that asks for nothing (`inert`: unset, false, empty, CrewAI's default) is accepted; any other
 *   value is accepted with a `note` when kubecrew does without it and the crew's results stay the same, and refused
 *   with `advice` (what to do instead) when kubecrew cannot honour it.
 */

export interface FieldRule {
  carried?: true;
  /** The values that ask for nothing; default: unset, null, false, an empty list or object. */
  inert?: (value: unknown) => boolean;
  /** Accepted with this note when not inert. */
  note?: string;
  /** Refused when not inert: what to do instead. */
  advice?: string;
}

export function isUnset(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}

const equals = (expected: unknown) => (value: unknown) => isUnset(value) || value === expected;

const CREWAI_RUNTIME = "or deploy the crew on the crewai runtime with an image holding your project";
const PYTHON = `it needs Python, which the kubecrew runtime does not run: remove it, ${CREWAI_RUNTIME}`;
const WEBHOOKS =
  "callbacks are Python: kubecrew calls webhooks instead (the kickoff's stepWebhookUrl, taskWebhookUrl and crewWebhookUrl) — remove it, " +
  CREWAI_RUNTIME;
const KNOWLEDGE =
  "kubecrew has no knowledge store: serve the documents from an MCP server (a search or file server) and list it in the agent's mcps, " +
  CREWAI_RUNTIME;
const MEMORY = `kubecrew keeps no memory between tasks or runs beyond the task context: remove it (or set it to false), ${CREWAI_RUNTIME}`;
const NOT_YET = (what: string) => `kubecrew does not run ${what} yet: remove it, ${CREWAI_RUNTIME}`;
const PROMPTS = `kubecrew writes its own prompts: remove it, ${CREWAI_RUNTIME}`;

const NOTES = {
  verbose: "kubecrew records every step of every task whatever this says (kubecrew logs, /status/{id}/events)",
  cache: "kubecrew does not cache tool results: every tool call runs",
  maxRpm: "kubecrew does not pace LLM calls per minute; it retries a call the provider refuses with 429",
  contextWindow: "kubecrew does not summarise a context longer than the model's window: the task fails instead",
  retries: "kubecrew retries a failed task spec.runner.retries times (one setting for the whole crew)",
} as const;

export const agentFieldRules: Record<string, FieldRule> = {
  role: { carried: true },
  goal: { carried: true },
  backstory: { carried: true },
  llm: { carried: true },
  max_tokens: { carried: true },
  max_iter: { carried: true },
  tools: { carried: true },
  mcps: { carried: true },
  apps: { carried: true },
  entity_type: { inert: equals("agent") },
  verbose: { note: NOTES.verbose },
  cache: { note: NOTES.cache },
  max_rpm: { note: NOTES.maxRpm },
  respect_context_window: { note: NOTES.contextWindow },
  use_better_compaction: { note: NOTES.contextWindow },
  max_retry_limit: { note: NOTES.retries },
  allow_delegation: { carried: true },
  config: { advice: "write the settings on the agent itself" },
  tool_failure_policy: {
    advice: `kubecrew hands a failed tool call's error to the model: remove it, ${CREWAI_RUNTIME}`,
  },
  agent_executor: { advice: PYTHON },
  executor_class: { advice: PYTHON },
  i18n: { advice: PROMPTS },
  knowledge_sources: { advice: KNOWLEDGE },
  knowledge_config: { advice: KNOWLEDGE },
  embedder: { advice: KNOWLEDGE },
  security_config: { advice: `kubecrew has no security_config: remove it, ${CREWAI_RUNTIME}` },
  checkpoint: {
    advice: "kubecrew keeps every finished task's output and resumes a restarted execution from there: remove it",
  },
  callbacks: { advice: WEBHOOKS },
  step_callback: { advice: WEBHOOKS },
  memory: { advice: MEMORY },
  skills: { advice: `kubecrew has no skills: remove them, ${CREWAI_RUNTIME}` },
  max_execution_time: {
    advice:
      "kubecrew bounds every task by spec.runner.taskTimeoutSeconds (one setting for the crew): remove it and set that",
  },
  use_system_prompt: { inert: equals(true), advice: PROMPTS },
  function_calling_llm: { advice: `kubecrew calls tools with the agent's own llm: remove it, ${CREWAI_RUNTIME}` },
  system_template: { advice: PROMPTS },
  prompt_template: { advice: PROMPTS },
  response_template: { advice: PROMPTS },
  allow_code_execution: { advice: `kubecrew runs no code for agents: remove it, ${CREWAI_RUNTIME}` },
  code_execution_mode: {
    inert: equals("safe"),
    advice: `kubecrew runs no code for agents: remove it, ${CREWAI_RUNTIME}`,
  },
  multimodal: { advice: `kubecrew agents read and write text only: remove it, ${CREWAI_RUNTIME}` },
  inject_date: { advice: "give the date as an input instead, e.g. {current_date} in the task description" },
  // Only read with inject_date, which is refused when set.
  date_format: { inert: () => true },
  planning: { advice: NOT_YET("planning before a task") },
  planning_config: { advice: NOT_YET("planning before a task") },
  reasoning: { advice: NOT_YET("reasoning before a task") },
  // Only read with reasoning, which is refused when set.
  max_reasoning_attempts: { inert: () => true },
  from_repository: {
    advice: "CrewAI AMP's agent repository is not reachable from kubecrew: write the agent's fields out",
  },
  guardrail: { advice: NOT_YET("agent guardrails") },
  // Only read with guardrail, which is refused when set.
  guardrail_max_retries: { inert: () => true },
  a2a: { advice: NOT_YET("agent-to-agent (A2A) delegation") },
};

export const taskFieldRules: Record<string, FieldRule> = {
  name: { carried: true },
  description: { carried: true },
  expected_output: { carried: true },
  agent: { carried: true },
  context: { carried: true },
  async_execution: { carried: true },
  tools: { carried: true },
  output_json: { carried: true },
  output_pydantic: { carried: true },
  response_model: { carried: true },
  guardrail: { carried: true },
  guardrails: { carried: true },
  guardrail_max_retries: { carried: true },
  max_retries: { carried: true },
  human_input: { carried: true },
  output_file: {
    note: "kubecrew writes no file: each task's output is in the execution's result (GET /status/{id})",
  },
  // Only read with output_file.
  create_directory: { inert: () => true },
  markdown: { advice: "ask for Markdown in expected_output instead" },
  prompt_context: { advice: PROMPTS },
  config: { advice: "write the settings on the task itself" },
  callback: { advice: WEBHOOKS },
  input_files: { advice: "give the file's text as an input, or serve the files from an MCP server the agent uses" },
  security_config: { advice: `kubecrew has no security_config: remove it, ${CREWAI_RUNTIME}` },
  converter_cls: { advice: PYTHON },
  tool_failure_policy: {
    advice: `kubecrew hands a failed tool call's error to the model: remove it, ${CREWAI_RUNTIME}`,
  },
  allow_crewai_trigger_context: { advice: "kubecrew has no CrewAI triggers: pass the payload as an input instead" },
  // ConditionalTask's (type: conditional): refused with the type.
  condition: { advice: NOT_YET("conditional tasks") },
};

export const crewFieldRules: Record<string, FieldRule> = {
  name: { carried: true },
  agents: { carried: true },
  tasks: { carried: true },
  process: { carried: true },
  inputs: { carried: true },
  entity_type: { inert: equals("crew") },
  verbose: { note: NOTES.verbose },
  cache: { note: NOTES.cache },
  max_rpm: { note: NOTES.maxRpm },
  stream: { note: "kubecrew streams each step at /status/{id}/events whatever this says" },
  output_log_file: { note: "kubecrew writes no log file: read the steps with kubecrew logs" },
  share_crew: { note: "kubecrew shares nothing with CrewAI" },
  tracing: { note: "kubecrew sends no traces to CrewAI's service; its steps are in the execution" },
  chat_llm: { note: "only `crewai chat` uses chat_llm; kubecrew has no chat" },
  memory: { advice: MEMORY },
  embedder: { advice: KNOWLEDGE },
  knowledge_sources: { advice: KNOWLEDGE },
  knowledge: { advice: KNOWLEDGE },
  manager_llm: { carried: true },
  manager_agent: { carried: true },
  function_calling_llm: { advice: `kubecrew calls tools with each agent's own llm: remove it, ${CREWAI_RUNTIME}` },
  config: { advice: "write the settings on the crew itself" },
  step_callback: { advice: WEBHOOKS },
  task_callback: { advice: WEBHOOKS },
  before_kickoff_callbacks: { advice: WEBHOOKS },
  after_kickoff_callbacks: { advice: WEBHOOKS },
  prompt_file: { advice: PROMPTS },
  trained_agents_file: { advice: `kubecrew does not train agents: remove it, ${CREWAI_RUNTIME}` },
  planning: { advice: NOT_YET("planning before the tasks") },
  // Only read with planning, which is refused when set.
  planning_llm: { inert: () => true },
  skills: { advice: `kubecrew has no skills: remove them, ${CREWAI_RUNTIME}` },
  security_config: { advice: `kubecrew has no security_config: remove it, ${CREWAI_RUNTIME}` },
  checkpoint: {
    advice: "kubecrew keeps every finished task's output and resumes a restarted execution from there: remove it",
  },
  tool_failure_policy: {
    advice: `kubecrew hands a failed tool call's error to the model: remove it, ${CREWAI_RUNTIME}`,
  },
};

export { CREWAI_RUNTIME, PYTHON, NOT_YET };
