import { z } from "zod";
import { logLevel, parseConfig } from "../core/config.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { runnerPolicy } from "../core/outbound/policy.ts";
import { APPS_CREDENTIAL_PATH } from "../kube/apps-secret.ts";
import type { AppsSettings } from "./apps-source.ts";
import type { Env } from "./llm.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/**
 * The runner's environment, parsed once at start-up; each variable's meaning and default are here, the one source of
 * docs/configuration.md. API keys are looked up by name later (an agent may name its own variable).
 */
export const runnerEnv = z.object({
  LOG_LEVEL: logLevel,
  KUBECREW_LLM_MAX_RETRIES: count(DEFAULT_RETRY_POLICY.maxRetries)
    .pipe(z.number().max(20))
    .describe("Retries of a failed LLM call (a rate limit, a 5xx, a timeout) at most (0–20)."),
  KUBECREW_LLM_RETRY_INITIAL_DELAY_MS: count(DEFAULT_RETRY_POLICY.initialDelayMs).describe(
    "The wait before an LLM call's first retry; doubled after each, with jitter.",
  ),
  KUBECREW_LLM_RETRY_MAX_DELAY_MS: count(DEFAULT_RETRY_POLICY.maxDelayMs).describe(
    "The longest wait between an LLM call's retries.",
  ),
  KUBECREW_LLM_MAX_RETRY_AFTER_SECONDS: count(DEFAULT_RETRY_POLICY.maxRetryAfterMs / 1000).describe(
    "The longest provider's Retry-After honoured; a longer one fails the call.",
  ),
  KUBECREW_LLM_TIMEOUT_SECONDS: count(DEFAULT_RETRY_POLICY.attemptTimeoutMs / 1000)
    .pipe(z.number().min(1))
    .describe("How long one LLM call may take."),
  KUBECREW_TASK_ATTEMPT: z.coerce
    .number()
    .int()
    .min(1)
    .default(1)
    .describe("Which attempt at the task this run is (set by the controller and kubecrew dev)."),
  KUBECREW_APPS_URL: z
    .string()
    .url()
    .optional()
    .describe("The connected apps' MCP endpoint (set by the controller or kubecrew dev for agents with apps)."),
  KUBECREW_APPS_CREDENTIAL_FILE: z
    .string()
    .min(1)
    .default(APPS_CREDENTIAL_PATH)
    .describe("The file holding the execution's app credential (mounted by the controller)."),
  KUBECREW_CREWAI_PYTHON: z
    .string()
    .min(1)
    .default("python3")
    .describe(
      "The Python of the CrewAI virtual environment, for crews with `runtime: crewai` (the image and kubecrew dev set it).",
    ),
  KUBECREW_TRACE_CONTENT: z
    .stringbool()
    .default(false)
    .describe("Prompts and completions on the LLM calls' spans (they may hold personal data: off unless asked for)."),
  KUBECREW_CONTAINER_ROOT: z
    .string()
    .default("")
    .describe(
      "Test harness only, set by the local test node: the directory the container's paths (the assignment, mounts, the app credential) live under.",
    ),
  POD_NAME: z
    .string()
    .optional()
    .describe("The task pod's name (the Downward API): names the result of a failed attempt."),
  KUBECONFIG: z
    .string()
    .optional()
    .describe("The kubeconfig file to use outside a cluster; in a pod, its service account."),
  // A task pod's loopback is the pod itself (a sidecar model server, say): allowed, unlike the cluster components'.
  ...outboundEnvSchema(runnerPolicy),
});

/**
 * What the runner sets for the CrewAI adapter it starts (crewai-runtime.ts) and the adapter reads
 * (crewai-adapter/): for docs/configuration.md; not a setting.
 */
export const adapterVariables = z.object({
  KUBECREW_RUNNER_PID: z
    .string()
    .optional()
    .describe("The runner's process id, set by the runner: the adapter ends when that process has died."),
});

/** The runner's configuration: the environment shaped for its parts. */
const runnerConfigSchema = runnerEnv.transform((c) => {
  const apps: AppsSettings | undefined = c.KUBECREW_APPS_URL
    ? { url: c.KUBECREW_APPS_URL, credentialFile: `${c.KUBECREW_CONTAINER_ROOT}${c.KUBECREW_APPS_CREDENTIAL_FILE}` }
    : undefined;
  return {
    logLevel: c.LOG_LEVEL,
    retry: {
      maxRetries: c.KUBECREW_LLM_MAX_RETRIES,
      initialDelayMs: c.KUBECREW_LLM_RETRY_INITIAL_DELAY_MS,
      maxDelayMs: c.KUBECREW_LLM_RETRY_MAX_DELAY_MS,
      maxRetryAfterMs: c.KUBECREW_LLM_MAX_RETRY_AFTER_SECONDS * 1000,
      attemptTimeoutMs: c.KUBECREW_LLM_TIMEOUT_SECONDS * 1000,
    } satisfies RetryPolicy,
    attempt: c.KUBECREW_TASK_ATTEMPT,
    /** Where LLM providers may be called. */
    outbound: outboundPolicyFrom(c),
    crewaiPython: c.KUBECREW_CREWAI_PYTHON,
    traceContent: c.KUBECREW_TRACE_CONTENT,
    /** Connected apps, when the controller (or kubecrew dev) set them up for this task. */
    ...(apps ? { apps } : {}),
    /** How a runner in a Job pod (--kubernetes) reaches the apiserver and where its container's paths are. */
    kubernetes: {
      containerRoot: c.KUBECREW_CONTAINER_ROOT,
      ...(c.POD_NAME ? { podName: c.POD_NAME } : {}),
      ...(c.KUBECONFIG ? { kubeconfigPath: c.KUBECONFIG } : {}),
    },
  };
});

/** What the runner runs with: the schema's type, and a snapshot of the environment for API key lookup. */
export type RunnerConfig = z.infer<typeof runnerConfigSchema> & { env: Env };

/** The runner's settings from its environment; a bad value throws core's ConfigError naming the variable. */
export function runnerConfigFromEnv(env: Env): RunnerConfig {
  return { ...parseConfig(runnerConfigSchema, env), env: { ...env } };
}
