import { z } from "zod";
import { API_VERSION } from "./api-group.ts";
import { appReferenceSchema } from "./apps.ts";
import { jsonValue } from "./json.ts";
import { crewProjectReference, taskPythonFields } from "./python-references.ts";
import { taskToolCallFields } from "./task-tool-call.ts";
import { taskGuardrailFields } from "./task-guardrails.ts";
import {
  builtinTool,
  DEFAULT_MAX_ITER,
  MAX_AGENT_MCPS,
  MAX_MAX_ITER,
  MAX_MCP_SERVERS,
  mcpReference,
  mcpServer,
  toolPolicy,
} from "./tools.ts";

/** Size limits of a crew (the CRD carries them too). */
export const MAX_TASKS = 100;
export const MAX_AGENTS = 50;
export const MAX_INPUTS = 100;
/** Named context tasks of one task (see contextTaskNames in task-graph.ts for a task without a list). */
export const MAX_CONTEXT = 20;
/** Entries of one agent's `apps` (there are fewer apps and actions than this). */
export const MAX_AGENT_APPS = 64;

/** Names used as Kubernetes-friendly identifiers: agent keys, task names, input names (CrewAI placeholder rules). */
export const placeholderName = z
  .string()
  .max(63)
  .regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, "must match [A-Za-z_][A-Za-z0-9_-]*");

/** A DNS-1123 label: crew and resource names. */
export const resourceName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be a DNS-1123 label (lowercase letters, digits, '-')");

export const crewInput = z.object({
  name: placeholderName.describe("Placeholder name, used as {name} in task and agent texts"),
  description: z.string().optional().describe("What the input means, shown to API users"),
  required: z
    .boolean()
    .default(true)
    .describe("A kickoff without this input (and without a default) is rejected with 422"),
  default: jsonValue.optional().describe("Value used when a kickoff omits the input"),
});
export type CrewInput = z.infer<typeof crewInput>;

export const secretKeyRef = z.object({
  name: z.string().min(1).describe("Secret name, in the crew's namespace"),
  key: z.string().min(1).describe("Key in the Secret"),
});
export type SecretKeyRef = z.infer<typeof secretKeyRef>;

export const llmProviders = ["openai", "anthropic", "openai-compatible", "local", "mock"] as const;
export const llmProvider = z.enum(llmProviders);
export type LlmProvider = z.infer<typeof llmProvider>;

export const llmConfig = z.object({
  provider: llmProvider.describe(
    "openai, anthropic, openai-compatible (any OpenAI-compatible base URL: Ollama, vLLM, LiteLLM), local (a GGUF model run in the runner process by llama.cpp) or mock (a deterministic test provider)",
  ),
  model: z
    .string()
    .min(1)
    .describe(
      "Model name as the provider knows it; for local, a GGUF file's path (relative to the model folder), a name `kubecrew model pull` knows, or hf:<owner>/<repo>/<file>.gguf",
    ),
  baseURL: z.string().url().optional().describe("API base URL; required for openai-compatible"),
  apiKeySecretRef: secretKeyRef.optional().describe("Secret holding the API key (Kubernetes mode)"),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/)
    .optional()
    .describe("Environment variable holding the API key (embedded mode); defaults to the provider's usual variable"),
  temperature: z.number().min(0).max(2).optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  contextSize: z
    .number()
    .int()
    .min(256)
    .max(131072)
    .optional()
    .describe("local: the context window in tokens (default 4096)"),
  threads: z
    .number()
    .int()
    .min(1)
    .max(256)
    .optional()
    .describe("local: CPU threads (default: half the cores, at least 1)"),
});
export type LlmConfig = z.infer<typeof llmConfig>;

export const agent = z.object({
  name: placeholderName.describe("Key that tasks use to name their agent"),
  role: z.string().min(1),
  goal: z.string().min(1),
  backstory: z.string().default(""),
  llm: llmConfig.optional().describe("The agent's model; defaults to the crew's llm"),
  tools: z.array(builtinTool).max(10).default([]).describe("Built-in tools the agent may use (http_request)"),
  mcps: z
    .array(mcpReference)
    .max(MAX_AGENT_MCPS)
    .default([])
    .describe(
      "MCP servers whose tools the agent may use: an http(s) URL or a spec.mcpServers name, each with an optional #tool",
    ),
  apps: z
    .array(appReferenceSchema)
    .max(MAX_AGENT_APPS)
    .default([])
    .describe(
      "Connected apps the agent acts with, by CrewAI's names: an app (gmail: all its actions) or one action (gmail/send_email), with the execution's user's account",
    ),
  maxIter: z
    .number()
    .int()
    .min(1)
    .max(MAX_MAX_ITER)
    .default(DEFAULT_MAX_ITER)
    .describe("Most LLM turns of one task (CrewAI's max_iter); the task fails when the last one still calls tools"),
  allowDelegation: z
    .boolean()
    .optional()
    .describe(
      "CrewAI's allow_delegation (default false): in a sequential crew the agent may hand work to, or ask a question of, the crew's other agents (delegation tools; the work runs in the task's pod)",
    ),
});
export type Agent = z.infer<typeof agent>;

export const task = z.object({
  name: placeholderName.describe("Task name; reported as task_id"),
  description: z.string().min(1),
  expectedOutput: z.string().min(1),
  agent: placeholderName
    .optional()
    .describe(
      "Name of the agent that carries the task out; in a hierarchical crew the one agent the manager delegates it to, and when left out the manager chooses among all agents",
    ),
  context: z
    .array(placeholderName)
    .max(MAX_CONTEXT)
    .optional()
    .describe(
      "Names of earlier tasks whose outputs are given as context (CrewAI's context); when omitted, a synchronous task gets every earlier output and an asynchronous one none",
    ),
  asyncExecution: z
    .boolean()
    .default(false)
    .describe(
      "CrewAI's async_execution: consecutive asynchronous tasks start together, each in its own Job, and the next synchronous task waits for all of them",
    ),
  tools: z
    .array(z.string().min(1).max(128))
    .max(200)
    .optional()
    .describe("Names of the only tools (of its agent's) this task may use; all of the agent's when omitted"),
  humanInput: z
    .boolean()
    .default(false)
    .describe(
      "CrewAI's human_input: after its answer the execution waits (no pod held) until a person approves it or asks for a revision (POST /resume)",
    ),
  ...taskGuardrailFields,
  ...taskPythonFields,
  ...taskToolCallFields,
});
export type Task = z.infer<typeof task>;

export const resourceRequirements = z.object({
  requests: z.record(z.string(), z.string()).optional(),
  limits: z.record(z.string(), z.string()).optional(),
});

export const runnerSettings = z.object({
  image: z.string().optional().describe("Runner image; defaults to the controller's configured image"),
  serviceAccountName: z
    .string()
    .optional()
    .describe("Service account of the task pods; defaults to the runner account"),
  resources: resourceRequirements.optional(),
  taskTimeoutSeconds: z.number().int().positive().default(600).describe("Per task (the Job's activeDeadlineSeconds)"),
  executionTimeoutSeconds: z.number().int().positive().default(3600).describe("Whole execution"),
  retries: z.number().int().min(0).max(10).default(1).describe("Retries of a failed task (the Job's backoffLimit)"),
  humanInputTimeoutSeconds: z
    .number()
    .int()
    .positive()
    .default(86_400)
    .describe(
      "How long a humanInput task waits for a person before the execution fails; waiting does not count against executionTimeoutSeconds",
    ),
  crew: crewProjectReference
    .optional()
    .describe(
      "A CrewAI project's @CrewBase class (module:Class) in the runner image, run whole: one Job for the execution with the crew's own process, each task's result reported as it finishes (runtime crewai only; the tasks must be the project's, by name and in order)",
    ),
  humanInputMaxRetries: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(5)
    .describe("How many times a person may send one task's answer back for a revision"),
});
export type RunnerSettings = z.infer<typeof runnerSettings>;

/** How a crew's tasks are carried out (CrewAI's Process). */
export const crewProcesses = ["sequential", "hierarchical"] as const;
export const crewProcess = z.enum(crewProcesses);
export type CrewProcess = z.infer<typeof crewProcess>;

/**
 * What runs a task in its pod: `kubecrew` (the TypeScript runner's own agent loop) or `crewai` (the CrewAI library in
 * Python, driven by the runner through crewai-adapter/).
 */
export const crewRuntimes = ["kubecrew", "crewai"] as const;
export const crewRuntime = z.enum(crewRuntimes);
export type CrewRuntime = z.infer<typeof crewRuntime>;

/** A user of connected apps, as the integrations service names users (the subject of a user token). */
export const appUser = z.string().min(1).max(256);

export const crewApps = z.object({
  runAs: appUser
    .optional()
    .describe(
      "The user whose connected apps an org-token kickoff acts as, when the kickoff names no user; a user-token kickoff always acts as its own user",
    ),
});
export type CrewApps = z.infer<typeof crewApps>;

/**
 * A Crew's spec field by field, without the rules between fields (crewSpecProblems, core/crew-problems.ts): parse with
 * `crewSpec` (core/crew-resource.ts), which checks both. Apart so that the rules' modules can name these types.
 */
export const crewSpecShape = z.object({
  description: z.string().optional(),
  inputs: z.array(crewInput).max(MAX_INPUTS).default([]),
  llm: llmConfig.optional().describe("Default model for agents without their own"),
  mcpServers: z.array(mcpServer).max(MAX_MCP_SERVERS).default([]).describe("MCP servers agents may name in their mcps"),
  toolPolicy: toolPolicy.default(() => toolPolicy.parse({})),
  apps: crewApps.optional().describe("Connected apps: whose accounts the agents' apps act with"),
  // The limits keep the CRD's CEL rules (which compare every task with every agent) within the apiserver's cost budget.
  agents: z.array(agent).min(1).max(MAX_AGENTS),
  tasks: z.array(task).min(1).max(MAX_TASKS),
  process: crewProcess
    .default("sequential")
    .describe(
      "sequential: each task is carried out by its agent; hierarchical: a manager (managerLlm or managerAgent) is given every task and delegates the work to the agents",
    ),
  managerLlm: llmConfig
    .optional()
    .describe("The model of the manager kubecrew provides in a hierarchical crew (CrewAI's manager_llm)"),
  managerAgent: agent
    .optional()
    .describe(
      "A manager of the crew's own for the hierarchical process (CrewAI's manager_agent): an agent definition without tools, mcps or apps; preferred to managerLlm when both are set",
    ),
  runtime: crewRuntime
    .default("kubecrew")
    .describe("What runs each task: kubecrew (the built-in runner) or crewai (the CrewAI library, in Python)"),
  runner: runnerSettings.default(() => runnerSettings.parse({})),
});

export type CrewSpec = z.infer<typeof crewSpecShape>;

export const objectMeta = z.object({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().optional(),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const condition = z.object({
  type: z.string(),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, "CamelCase"),
  message: z.string().default(""),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});
export type Condition = z.infer<typeof condition>;

export const crewStatus = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(condition).optional(),
  inputs: z
    .array(z.string())
    .optional()
    .describe("Every input the crew needs: declared ones and discovered placeholders"),
  taskCount: z.number().int().optional(),
  webhookSigning: z
    .object({
      secretRef: secretKeyRef.describe("The Secret (in the crew's namespace) and key whose value signs the webhooks"),
      generated: z
        .boolean()
        .describe(
          "True when kubecrew generated the Secret (owned by the Crew, deleted with it); false: the crew's own",
        ),
    })
    .optional()
    .describe(
      "Which secret signs the crew's task, step and crew webhooks (X-Kubecrew-Signature): its name, never its value",
    ),
});
export type CrewWebhookSigning = NonNullable<z.infer<typeof crewStatus>["webhookSigning"]>;
export type CrewStatus = z.infer<typeof crewStatus>;

/** The Crew kind field by field; `crew` (core/crew-resource.ts) is the one to parse with. */
export const crewShape = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("Crew"),
  metadata: objectMeta,
  spec: crewSpecShape,
  status: crewStatus.optional(),
});
export type Crew = z.infer<typeof crewShape>;
