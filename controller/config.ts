import { hostname } from "node:os";
import { z } from "zod";
import { ConfigError, logLevel, parseConfig } from "../core/config.ts";
import { appsEnv, appsSettingsFrom } from "../core/execution-apps.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { llmPricesEnv } from "../core/usage.ts";
import { EVENT_BURST, EVENTS_PER_SECOND } from "../kube/runtime/events.ts";
import { modelVolumeSource } from "./model-volume.ts";

const seconds = (fallback: number) => z.coerce.number().min(0).default(fallback);

/**
 * The controller's environment, parsed once at startup: each variable's meaning, default and check, the one source of
 * docs/configuration.md (hack/generate-config-docs.ts).
 */
/**
 * The standard OpenTelemetry variables the controller traces with (platform/telemetry reads them) and hands on to task
 * pods as they are, so that the runners export to the same backend; the pods' OTEL_SERVICE_NAME is their own.
 */
const TELEMETRY_VARIABLES = {
  OTEL_EXPORTER_OTLP_ENDPOINT: "Where traces go (OTLP over HTTP, /v1/traces appended); unset: no tracing.",
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "Where traces go, as given (overrides OTEL_EXPORTER_OTLP_ENDPOINT).",
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf, the one protocol kubecrew exports with.",
  OTEL_RESOURCE_ATTRIBUTES: "key=value,… added to every span's resource.",
  KUBECREW_TRACE_CONTENT: "true: LLM spans carry prompts and completions (off by default).",
} as const;
const runnerTelemetryEnv = Object.fromEntries(
  Object.entries(TELEMETRY_VARIABLES).map(([name, text]) => [
    name,
    z.string().optional().describe(`${text} Handed to task pods.`),
  ]),
) as { [K in keyof typeof TELEMETRY_VARIABLES]: z.ZodOptional<z.ZodString> };

function runnerTelemetryFrom(c: Partial<Record<keyof typeof TELEMETRY_VARIABLES, string>>) {
  return Object.keys(TELEMETRY_VARIABLES)
    .map((name) => ({ name, value: c[name as keyof typeof TELEMETRY_VARIABLES] }))
    .filter((e): e is { name: string; value: string } => !!e.value);
}

export const controllerEnv = z.object({
  LOG_LEVEL: logLevel,
  KUBECONFIG: z
    .string()
    .optional()
    .describe("The kubeconfig file to use outside a cluster; in a pod, its service account."),
  KUBECREW_NAMESPACE: z.string().default("").describe("The namespace to watch; empty for every namespace."),
  KUBECREW_CONTROLLER_WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(32)
    .describe("Reconciles run at once (1–256)."),
  KUBECREW_CONTROLLER_URGENT_WORKERS: z.coerce.number().int().min(1).max(256).optional().meta({
    description:
      "Workers beside KUBECREW_CONTROLLER_WORKERS that take only urgent keys (a task's result, a Job's end).",
    defaultText: "a quarter of the workers",
  }),
  // 300: at 2,100 executions/min with 3–8 s from a Job's creation to its pod running, 100–280 are starting (Little's
  // law); 100 cut bench:controller-scale's throughput by a third.
  KUBECREW_CONTROLLER_MAX_STARTING_TASKS: z.coerce
    .number()
    .int()
    .min(0)
    .default(300)
    .describe("Tasks starting at once at most (Job created, pod not running yet); 0: no limit. Sharded: per replica."),
  KUBECREW_RUNNER_IMAGE: z.string().min(1).default("kubecrew:0.1.0").describe("The image of task pods."),
  KUBECREW_CREWAI_RUNNER_IMAGE: z
    .string()
    .min(1)
    .default("kubecrew-crewai:0.1.0")
    .describe("The image of task pods of crews with `runtime: crewai` (the runner with CrewAI in Python beside it)."),
  KUBECREW_RUNNER_IMAGE_PULL_POLICY: z
    .enum(["Always", "IfNotPresent", "Never"])
    .optional()
    .describe("The task pods' imagePullPolicy; Kubernetes' default when unset."),
  KUBECREW_RUNNER_SERVICE_ACCOUNT: z
    .string()
    .min(1)
    .default("kubecrew-runner")
    .describe("The service account of task pods (it may create CrewTaskResults)."),
  KUBECREW_RUNNER_LOG_LEVEL: logLevel.describe("The log level handed to task pods (their LOG_LEVEL)."),
  KUBECREW_RUNNER_MODEL_VOLUME: modelVolumeSource
    .optional()
    .describe(
      "The volume of the local provider's models, as a JSON volume source without its name (e.g. " +
        '`{"persistentVolumeClaim":{"claimName":"models","readOnly":true}}`): mounted read-only at /models in the pods ' +
        "of tasks that run a local model.",
    ),
  KUBECREW_FINISHED_TTL_SECONDS: z.coerce
    .number()
    .int()
    .default(86_400)
    .describe("How long a finished execution's Jobs, pods and ConfigMaps are kept before they are removed."),
  KUBECREW_HEALTH_HOST: z.string().default("0.0.0.0").describe("The address of the health and metrics server."),
  KUBECREW_HEALTH_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(8081)
    .describe("The port of the health and metrics server (/healthz, /readyz, /metrics)."),
  KUBECREW_LEADER_ELECT: z
    .stringbool()
    .default(true)
    .describe("Leader election through a Lease, so that one replica of several reconciles."),
  KUBECREW_LEADER_ELECTION_NAMESPACE: z.string().optional().meta({
    description: "The namespace of the leader and shard Leases.",
    defaultText: "POD_NAMESPACE, else KUBECREW_NAMESPACE, else `default`",
  }),
  KUBECREW_LEADER_ELECTION_ID: z
    .string()
    .default("kubecrew-controller")
    .describe("The leader Lease's name; shard Leases are `<id>-shard-<i>`."),
  KUBECREW_LEASE_DURATION_SECONDS: seconds(15).describe("How long the leader Lease holds without renewal."),
  KUBECREW_RENEW_DEADLINE_SECONDS: seconds(10).describe("How long the leader tries to renew before it stops leading."),
  KUBECREW_RETRY_PERIOD_SECONDS: seconds(2).describe("How often the leader Lease is tried or renewed."),
  KUBECREW_CONTROLLER_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe("Shards of executions across replicas (needs leader election); 1 is one leader doing everything."),
  // A SIGKILLed replica's shards are taken over within duration + 2 × retry period (12 s).
  KUBECREW_SHARD_LEASE_DURATION_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(8)
    .describe("How long a shard Lease holds without renewal."),
  KUBECREW_SHARD_RENEW_DEADLINE_SECONDS: seconds(6).describe(
    "How long a shard's holder tries to renew before it lets the shard go; shorter than the shard lease duration.",
  ),
  KUBECREW_SHARD_RETRY_PERIOD_SECONDS: seconds(2).describe("How often shard Leases are tried or renewed."),
  KUBECREW_CONTROLLER_ID: z.string().optional().meta({
    description: "This replica's name in the Leases.",
    defaultText: "POD_NAME, else the host name",
  }),
  POD_NAME: z.string().optional().describe("The pod's name (the Downward API, set by the chart)."),
  POD_NAMESPACE: z.string().optional().describe("The pod's namespace (the Downward API, set by the chart)."),
  KUBECREW_WEBHOOK_SECRET_KEY: z
    .string()
    .default("secret")
    .describe(
      "The key, in a crew's webhook signing Secret, that holds the signing key (also in those kubecrew generates).",
    ),
  KUBECREW_WEBHOOK_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .default(8)
    .describe("Deliveries of one webhook tried at most."),
  KUBECREW_WEBHOOK_INITIAL_DELAY_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(1000)
    .describe("The wait before a webhook's second attempt; doubled after each failure."),
  KUBECREW_WEBHOOK_TIMEOUT_SECONDS: seconds(10).describe("How long one webhook delivery may take."),
  KUBECREW_WATCH_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(300)
    .describe("How long one watch of the apiserver lasts before it is started again."),
  KUBECREW_SHUTDOWN_TIMEOUT_SECONDS: seconds(20).describe("How long reconciles in flight may finish on SIGTERM."),
  KUBECREW_EVENTS_PER_SECOND: z.coerce
    .number()
    .min(0)
    .default(EVENTS_PER_SECOND)
    .describe("Kubernetes Events posted per second at most (0: none), in bursts of up to KUBECREW_EVENTS_BURST."),
  KUBECREW_EVENTS_BURST: z.coerce.number().int().min(1).default(EVENT_BURST).describe("Events posted at once at most."),
  KUBECREW_LLM_PRICES: llmPricesEnv.describe(
    'Model → US dollars per million input/output tokens (JSON: {"<model>": {"input": <usd>, "output": <usd>}}), for the ' +
      "CrewExecution status's `usage.costUsd` and kubecrew_llm_cost_usd_total; empty: no cost.",
  ),
  ...appsEnv,
  ...outboundEnvSchema(clusterPolicy),
  ...runnerTelemetryEnv,
});

/** The controller's configuration: the environment, checked across variables and shaped for its parts. */
export const controllerConfigSchema = controllerEnv.transform((c) => {
  const apps = appsSettingsFrom(c);
  if (c.KUBECREW_CONTROLLER_SHARDS > 1 && !c.KUBECREW_LEADER_ELECT) {
    throw new ConfigError("KUBECREW_CONTROLLER_SHARDS", "more than 1 shard needs KUBECREW_LEADER_ELECT=true (Leases)");
  }
  if (
    c.KUBECREW_CONTROLLER_SHARDS > 1 &&
    !/^[a-z0-9]([a-z0-9.-]{0,50}[a-z0-9])?$/.test(c.KUBECREW_LEADER_ELECTION_ID)
  ) {
    // It names the shard Leases and labels them (a label value: 63 characters at most).
    throw new ConfigError(
      "KUBECREW_LEADER_ELECTION_ID",
      "with shards, at most 52 lowercase letters, digits, '-' or '.'",
    );
  }
  if (c.KUBECREW_SHARD_RENEW_DEADLINE_SECONDS >= c.KUBECREW_SHARD_LEASE_DURATION_SECONDS) {
    throw new ConfigError("KUBECREW_SHARD_RENEW_DEADLINE_SECONDS", "must be shorter than the shard lease duration");
  }
  return {
    logLevel: c.LOG_LEVEL,
    ...(c.KUBECONFIG ? { kubeconfigPath: c.KUBECONFIG } : {}),
    namespace: c.KUBECREW_NAMESPACE,
    workers: c.KUBECREW_CONTROLLER_WORKERS,
    urgentWorkers: c.KUBECREW_CONTROLLER_URGENT_WORKERS ?? Math.ceil(c.KUBECREW_CONTROLLER_WORKERS / 4),
    maxStartingTasks: c.KUBECREW_CONTROLLER_MAX_STARTING_TASKS,
    runnerImage: c.KUBECREW_RUNNER_IMAGE,
    crewaiRunnerImage: c.KUBECREW_CREWAI_RUNNER_IMAGE,
    ...(c.KUBECREW_RUNNER_IMAGE_PULL_POLICY ? { runnerImagePullPolicy: c.KUBECREW_RUNNER_IMAGE_PULL_POLICY } : {}),
    runnerServiceAccount: c.KUBECREW_RUNNER_SERVICE_ACCOUNT,
    ...(c.KUBECREW_RUNNER_MODEL_VOLUME ? { runnerModelVolume: c.KUBECREW_RUNNER_MODEL_VOLUME } : {}),
    runnerLogLevel: c.KUBECREW_RUNNER_LOG_LEVEL,
    runnerTelemetry: runnerTelemetryFrom(c),
    finishedTtlSeconds: c.KUBECREW_FINISHED_TTL_SECONDS,
    health: { host: c.KUBECREW_HEALTH_HOST, port: c.KUBECREW_HEALTH_PORT },
    leaderElection: {
      enabled: c.KUBECREW_LEADER_ELECT,
      namespace: c.KUBECREW_LEADER_ELECTION_NAMESPACE ?? c.POD_NAMESPACE ?? (c.KUBECREW_NAMESPACE || "default"),
      name: c.KUBECREW_LEADER_ELECTION_ID,
      identity: c.KUBECREW_CONTROLLER_ID ?? c.POD_NAME ?? hostname(),
      leaseDurationSeconds: c.KUBECREW_LEASE_DURATION_SECONDS,
      renewDeadlineSeconds: c.KUBECREW_RENEW_DEADLINE_SECONDS,
      retryPeriodSeconds: c.KUBECREW_RETRY_PERIOD_SECONDS,
    },
    sharding: {
      shards: c.KUBECREW_CONTROLLER_SHARDS,
      leaseDurationSeconds: c.KUBECREW_SHARD_LEASE_DURATION_SECONDS,
      renewDeadlineSeconds: c.KUBECREW_SHARD_RENEW_DEADLINE_SECONDS,
      retryPeriodSeconds: c.KUBECREW_SHARD_RETRY_PERIOD_SECONDS,
    },
    webhooks: {
      secretKey: c.KUBECREW_WEBHOOK_SECRET_KEY,
      maxAttempts: c.KUBECREW_WEBHOOK_MAX_ATTEMPTS,
      initialDelayMs: c.KUBECREW_WEBHOOK_INITIAL_DELAY_MS,
      timeoutMs: c.KUBECREW_WEBHOOK_TIMEOUT_SECONDS * 1000,
    },
    watchTimeoutSeconds: c.KUBECREW_WATCH_TIMEOUT_SECONDS,
    shutdownTimeoutMs: c.KUBECREW_SHUTDOWN_TIMEOUT_SECONDS * 1000,
    events: { perSecond: c.KUBECREW_EVENTS_PER_SECOND, burst: c.KUBECREW_EVENTS_BURST },
    outbound: outboundPolicyFrom(c),
    llmPrices: c.KUBECREW_LLM_PRICES,
    ...(apps ? { apps } : {}),
  };
});

/** What the controller runs with (its type is the schema's: no second description of it). */
export type ControllerConfig = z.infer<typeof controllerConfigSchema>;

/** The controller's settings from its environment; a bad value throws core's ConfigError naming the variable. */
export function controllerConfigFromEnv(env: Record<string, string | undefined>): ControllerConfig {
  return parseConfig(controllerConfigSchema, env);
}
