import { z } from "zod";
import { configSchema, derived, logLevel, parseConfig, variable } from "../core/config.ts";
import { outboundFields } from "../core/outbound/config.ts";
import { runnerPolicy } from "../core/outbound/policy.ts";
import { APPS_CREDENTIAL_PATH } from "../kube/apps-secret.ts";
import type { AppsSettings } from "./apps-source.ts";
import type { Env } from "./llm.ts";
import { DEFAULT_RETRY_POLICY } from "./retry.ts";

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** Read by the runner and, for the crewai runtime, by the adapter's tracing (crewai-adapter/kubecrew_crewai/tracing.py). */
const traceContent = variable(
  "KUBECREW_TRACE_CONTENT",
  z
    .stringbool()
    .default(false)
    .describe("Prompts and completions on the LLM calls' spans (they may hold personal data: off unless asked for)."),
);

/**
 * The runner's configuration, each field beside its variable (its meaning and default the one source of
 * docs/configuration.md). API keys are looked up by name later (an agent may name its own variable).
 */
const runnerFields = {
  logLevel: variable("LOG_LEVEL", logLevel),
  retry: {
    maxRetries: variable(
      "KUBECREW_LLM_MAX_RETRIES",
      count(DEFAULT_RETRY_POLICY.maxRetries)
        .pipe(z.number().max(20))
        .describe("Retries of a failed LLM call (a rate limit, a 5xx, a timeout) at most (0–20)."),
    ),
    initialDelayMs: variable(
      "KUBECREW_LLM_RETRY_INITIAL_DELAY_MS",
      count(DEFAULT_RETRY_POLICY.initialDelayMs).describe(
        "The wait before an LLM call's first retry; doubled after each, with jitter.",
      ),
    ),
    maxDelayMs: variable(
      "KUBECREW_LLM_RETRY_MAX_DELAY_MS",
      count(DEFAULT_RETRY_POLICY.maxDelayMs).describe("The longest wait between an LLM call's retries."),
    ),
    maxRetryAfterMs: variable(
      "KUBECREW_LLM_MAX_RETRY_AFTER_SECONDS",
      count(DEFAULT_RETRY_POLICY.maxRetryAfterMs / 1000)
        .transform((s) => s * 1000)
        .describe("The longest provider's Retry-After honoured; a longer one fails the call."),
    ),
    attemptTimeoutMs: variable(
      "KUBECREW_LLM_TIMEOUT_SECONDS",
      count(DEFAULT_RETRY_POLICY.attemptTimeoutMs / 1000)
        .pipe(z.number().min(1))
        .transform((s) => s * 1000)
        .describe("How long one LLM call may take."),
    ),
  },
  attempt: variable(
    "KUBECREW_TASK_ATTEMPT",
    z.coerce
      .number()
      .int()
      .min(1)
      .default(1)
      .describe("Which attempt at the task this run is (set by the controller and kubecrew dev)."),
  ),
  /** Where LLM providers may be called. A task pod's loopback is the pod itself (a sidecar model server, say):
   * allowed, unlike the cluster components'. */
  outbound: outboundFields(runnerPolicy),
  crewaiPython: variable(
    "KUBECREW_CREWAI_PYTHON",
    z
      .string()
      .min(1)
      .default("python3")
      .describe(
        "The Python of the CrewAI virtual environment, for crews with `runtime: crewai` (the image and kubecrew dev set it).",
      ),
  ),
  traceContent,
  /** Connected apps, when the controller (or kubecrew dev) set them up for this task. */
  apps: derived(
    {
      url: variable(
        "KUBECREW_APPS_URL",
        z
          .string()
          .url()
          .optional()
          .describe("The connected apps' MCP endpoint (set by the controller or kubecrew dev for agents with apps)."),
      ),
      credentialFile: variable(
        "KUBECREW_APPS_CREDENTIAL_FILE",
        z
          .string()
          .min(1)
          .default(APPS_CREDENTIAL_PATH)
          .describe("The file holding the execution's app credential (mounted by the controller)."),
      ),
    },
    (a): AppsSettings | undefined => (a.url ? { url: a.url, credentialFile: a.credentialFile } : undefined),
  ),
  /** How a runner in a Job pod (--kubernetes) reaches the apiserver and names its results. */
  kubernetes: {
    podName: variable(
      "POD_NAME",
      z
        .string()
        .optional()
        .describe(
          "The task pod's name (the Downward API): names the result of a failed attempt; on the runner's spans as k8s.pod.name.",
        ),
    ),
    namespace: variable(
      "POD_NAMESPACE",
      z
        .string()
        .optional()
        .describe("The task pod's namespace (the Downward API): on the runner's spans as k8s.namespace.name."),
    ),
    kubeconfigPath: variable(
      "KUBECONFIG",
      z.string().optional().describe("The kubeconfig file to use outside a cluster; in a pod, its service account."),
    ),
  },
};

/** The runner's configuration schema: its environment is its shape (docs/configuration.md), the config its output. */
export const runnerEnv = configSchema(runnerFields);

/**
 * What the CrewAI adapter (crewai-adapter/) reads besides OpenTelemetry's variables: the runner's KUBECREW_TRACE_CONTENT,
 * and KUBECREW_RUNNER_PID, which the runner sets for the adapter it starts (crewai-runtime.ts): for docs/configuration.md.
 */
export const adapterVariables = z.object({
  [traceContent.name]: traceContent.schema,
  KUBECREW_RUNNER_PID: z
    .string()
    .optional()
    .describe("The runner's process id, set by the runner: the adapter ends when that process has died."),
});

/** What the runner runs with: the schema's type, and a snapshot of the environment for API key lookup. */
export type RunnerConfig = z.infer<typeof runnerEnv> & { env: Env };

/** The runner's settings from its environment; a bad value throws core's ConfigError naming the variable. */
export function runnerConfigFromEnv(env: Env): RunnerConfig {
  return { ...parseConfig(runnerEnv, env), env: { ...env } };
}
