import { z } from "zod";
import { logLevel, parseConfig } from "../core/config.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { runnerPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { APPS_CREDENTIAL_PATH } from "../kube/apps-secret.ts";
import type { AppsSettings } from "./apps-source.ts";
import type { Env } from "./llm.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** The runner's environment variables; API keys are looked up by name later (an agent may name its own variable). */
const runnerEnv = z.object({
  LOG_LEVEL: logLevel,
  KUBECREW_LLM_MAX_RETRIES: count(DEFAULT_RETRY_POLICY.maxRetries).pipe(z.number().max(20)),
  KUBECREW_LLM_RETRY_INITIAL_DELAY_MS: count(DEFAULT_RETRY_POLICY.initialDelayMs),
  KUBECREW_LLM_RETRY_MAX_DELAY_MS: count(DEFAULT_RETRY_POLICY.maxDelayMs),
  KUBECREW_LLM_MAX_RETRY_AFTER_SECONDS: count(DEFAULT_RETRY_POLICY.maxRetryAfterMs / 1000),
  KUBECREW_LLM_TIMEOUT_SECONDS: count(DEFAULT_RETRY_POLICY.attemptTimeoutMs / 1000).pipe(z.number().min(1)),
  KUBECREW_TASK_ATTEMPT: z.coerce.number().int().min(1).default(1),
  /** The connected apps' MCP endpoint and the execution's credential (set by the controller or kubecrew dev). */
  KUBECREW_APPS_URL: z.string().url().optional(),
  KUBECREW_APPS_CREDENTIAL_FILE: z.string().min(1).default(APPS_CREDENTIAL_PATH),
  /** The Python of the CrewAI virtual environment, for crews with `runtime: crewai` (the image and kubecrew dev set it). */
  KUBECREW_CREWAI_PYTHON: z.string().min(1).default("python3"),
  /** Prompts and completions on the LLM calls' spans (they may hold personal data: off unless asked for). */
  KUBECREW_TRACE_CONTENT: z.stringbool().default(false),
  /** Set by the local test node: container paths (the credential's mount) live under this directory. */
  KUBECREW_CONTAINER_ROOT: z.string().default(""),
  // A task pod's loopback is the pod itself (a sidecar model server, say): allowed, unlike the cluster components'.
  ...outboundEnvSchema(runnerPolicy),
});

export interface RunnerConfig {
  logLevel: string;
  retry: RetryPolicy;
  attempt: number;
  /** Where LLM providers may be called. */
  outbound: OutboundPolicy;
  /** Connected apps, when the controller (or kubecrew dev) set them up for this task. */
  apps?: AppsSettings;
  /** The Python that runs `runtime: crewai` tasks (crewai-adapter/ and CrewAI installed). */
  crewaiPython: string;
  /** Prompts and completions go on the LLM calls' spans (KUBECREW_TRACE_CONTENT). */
  traceContent: boolean;
  /** A snapshot of the environment, for API key lookup. */
  env: Env;
}

/** The runner's settings from its environment; a bad value throws core's ConfigError naming the variable. */
export function runnerConfigFromEnv(env: Env): RunnerConfig {
  const c = parseConfig(runnerEnv, env);
  return {
    logLevel: c.LOG_LEVEL,
    retry: {
      maxRetries: c.KUBECREW_LLM_MAX_RETRIES,
      initialDelayMs: c.KUBECREW_LLM_RETRY_INITIAL_DELAY_MS,
      maxDelayMs: c.KUBECREW_LLM_RETRY_MAX_DELAY_MS,
      maxRetryAfterMs: c.KUBECREW_LLM_MAX_RETRY_AFTER_SECONDS * 1000,
      attemptTimeoutMs: c.KUBECREW_LLM_TIMEOUT_SECONDS * 1000,
    },
    attempt: c.KUBECREW_TASK_ATTEMPT,
    outbound: outboundPolicyFrom(c),
    crewaiPython: c.KUBECREW_CREWAI_PYTHON,
    traceContent: c.KUBECREW_TRACE_CONTENT,
    ...(c.KUBECREW_APPS_URL
      ? {
          apps: {
            url: c.KUBECREW_APPS_URL,
            credentialFile: `${c.KUBECREW_CONTAINER_ROOT}${c.KUBECREW_APPS_CREDENTIAL_FILE}`,
          },
        }
      : {}),
    env: { ...env },
  };
}
