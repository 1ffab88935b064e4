import { hostname } from "node:os";
import { z } from "zod";
import { configSchema, ConfigError, derived, logLevel, parseConfig, variable } from "../core/config.ts";
import { appsSettings } from "../core/execution-apps.ts";
import { outboundFields } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { llmPricesEnv } from "../core/usage.ts";
import { EVENT_BURST, EVENTS_PER_SECOND } from "../kube/runtime/events.ts";
import { modelVolumeSource } from "./model-volume.ts";

const seconds = (fallback: number) => z.coerce.number().min(0).default(fallback);

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

/** The variables above as the task pods get them: each one set, by name. */
const runnerTelemetry = derived(
  Object.fromEntries(
    Object.entries(TELEMETRY_VARIABLES).map(([name, text]) => [
      name,
      variable(name, z.string().optional().describe(`${text} Handed to task pods.`)),
    ]),
  ),
  (values) =>
    Object.entries(values)
      .filter((e): e is [string, string] => !!e[1])
      .map(([name, value]) => ({ name, value })),
);

// Variables read by more than one field (a fallback of another), or named by the checks across variables below.
const namespace = variable(
  "KUBECREW_NAMESPACE",
  z.string().default("").describe("The namespace to watch; empty for every namespace."),
);
const workers = variable(
  "KUBECREW_CONTROLLER_WORKERS",
  z.coerce.number().int().min(1).max(256).default(32).describe("Reconciles run at once (1–256)."),
);
const leaderElect = variable(
  "KUBECREW_LEADER_ELECT",
  z.stringbool().default(true).describe("Leader election through a Lease, so that one replica of several reconciles."),
);
const leaderElectionId = variable(
  "KUBECREW_LEADER_ELECTION_ID",
  z.string().default("kubecrew-controller").describe("The leader Lease's name; shard Leases are `<id>-shard-<i>`."),
);
const shards = variable(
  "KUBECREW_CONTROLLER_SHARDS",
  z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe("Shards of executions across replicas (needs leader election); 1 is one leader doing everything."),
);
const shardRenewDeadline = variable(
  "KUBECREW_SHARD_RENEW_DEADLINE_SECONDS",
  seconds(6).describe(
    "How long a shard's holder tries to renew before it lets the shard go; shorter than the shard lease duration.",
  ),
);

/**
 * The controller's configuration, each field beside the variable it is read from: its meaning, default and check,
 * the one source of docs/configuration.md (hack/generate-config-docs.ts).
 */
const controllerFields = {
  logLevel: variable("LOG_LEVEL", logLevel),
  kubeconfigPath: variable(
    "KUBECONFIG",
    z.string().optional().describe("The kubeconfig file to use outside a cluster; in a pod, its service account."),
  ),
  namespace,
  workers,
  urgentWorkers: derived(
    {
      given: variable(
        "KUBECREW_CONTROLLER_URGENT_WORKERS",
        z.coerce.number().int().min(1).max(256).optional().meta({
          description:
            "Workers beside KUBECREW_CONTROLLER_WORKERS that take only urgent keys (a task's result, a Job's end).",
          defaultText: "a quarter of the workers",
        }),
      ),
      workers,
    },
    (w) => w.given ?? Math.ceil(w.workers / 4),
  ),
  // 300: at 2,100 executions/min with 3–8 s from a Job's creation to its pod running, 100–280 are starting (Little's
  // law); 100 cut bench:controller-scale's throughput by a third.
  maxStartingTasks: variable(
    "KUBECREW_CONTROLLER_MAX_STARTING_TASKS",
    z.coerce
      .number()
      .int()
      .min(0)
      .default(300)
      .describe(
        "Tasks starting at once at most (Job created, pod not running yet); 0: no limit. Sharded: per replica.",
      ),
  ),
  runnerImage: variable(
    "KUBECREW_RUNNER_IMAGE",
    z.string().min(1).default("kubecrew:0.1.0").describe("The image of task pods."),
  ),
  crewaiRunnerImage: variable(
    "KUBECREW_CREWAI_RUNNER_IMAGE",
    z
      .string()
      .min(1)
      .default("kubecrew-crewai:0.1.0")
      .describe("The image of task pods of crews with `runtime: crewai` (the runner with CrewAI in Python beside it)."),
  ),
  runnerImagePullPolicy: variable(
    "KUBECREW_RUNNER_IMAGE_PULL_POLICY",
    z
      .enum(["Always", "IfNotPresent", "Never"])
      .optional()
      .describe("The task pods' imagePullPolicy; Kubernetes' default when unset."),
  ),
  runnerServiceAccount: variable(
    "KUBECREW_RUNNER_SERVICE_ACCOUNT",
    z
      .string()
      .min(1)
      .default("kubecrew-runner")
      .describe("The service account of task pods (it may create CrewTaskResults)."),
  ),
  runnerModelVolume: variable(
    "KUBECREW_RUNNER_MODEL_VOLUME",
    modelVolumeSource
      .optional()
      .describe(
        "The volume of the local provider's models, as a JSON volume source without its name (e.g. " +
          '`{"persistentVolumeClaim":{"claimName":"models","readOnly":true}}`): mounted read-only at /models in the pods ' +
          "of tasks that run a local model.",
      ),
  ),
  runnerLogLevel: variable(
    "KUBECREW_RUNNER_LOG_LEVEL",
    logLevel.describe("The log level handed to task pods (their LOG_LEVEL)."),
  ),
  runnerTelemetry,
  finishedTtlSeconds: variable(
    "KUBECREW_FINISHED_TTL_SECONDS",
    z.coerce
      .number()
      .int()
      .default(86_400)
      .describe("How long a finished execution's Jobs, pods and ConfigMaps are kept before they are removed."),
  ),
  health: {
    host: variable(
      "KUBECREW_HEALTH_HOST",
      z.string().default("0.0.0.0").describe("The address of the health and metrics server."),
    ),
    port: variable(
      "KUBECREW_HEALTH_PORT",
      z.coerce
        .number()
        .int()
        .min(0)
        .max(65535)
        .default(8081)
        .describe("The port of the health and metrics server (/healthz, /readyz, /metrics)."),
    ),
  },
  leaderElection: {
    enabled: leaderElect,
    namespace: derived(
      {
        given: variable(
          "KUBECREW_LEADER_ELECTION_NAMESPACE",
          z.string().optional().meta({
            description: "The namespace of the leader and shard Leases.",
            defaultText: "POD_NAMESPACE, else KUBECREW_NAMESPACE, else `default`",
          }),
        ),
        podNamespace: variable(
          "POD_NAMESPACE",
          z.string().optional().describe("The pod's namespace (the Downward API, set by the chart)."),
        ),
        namespace,
      },
      (n) => n.given ?? n.podNamespace ?? (n.namespace || "default"),
    ),
    name: leaderElectionId,
    identity: derived(
      {
        given: variable(
          "KUBECREW_CONTROLLER_ID",
          z.string().optional().meta({
            description: "This replica's name in the Leases.",
            defaultText: "POD_NAME, else the host name",
          }),
        ),
        podName: variable(
          "POD_NAME",
          z.string().optional().describe("The pod's name (the Downward API, set by the chart)."),
        ),
      },
      (i) => i.given ?? i.podName ?? hostname(),
    ),
    leaseDurationSeconds: variable(
      "KUBECREW_LEASE_DURATION_SECONDS",
      seconds(15).describe("How long the leader Lease holds without renewal."),
    ),
    renewDeadlineSeconds: variable(
      "KUBECREW_RENEW_DEADLINE_SECONDS",
      seconds(10).describe("How long the leader tries to renew before it stops leading."),
    ),
    retryPeriodSeconds: variable(
      "KUBECREW_RETRY_PERIOD_SECONDS",
      seconds(2).describe("How often the leader Lease is tried or renewed."),
    ),
  },
  sharding: {
    shards,
    // A SIGKILLed replica's shards are taken over within duration + 2 × retry period (12 s).
    leaseDurationSeconds: variable(
      "KUBECREW_SHARD_LEASE_DURATION_SECONDS",
      z.coerce.number().int().min(1).default(8).describe("How long a shard Lease holds without renewal."),
    ),
    renewDeadlineSeconds: shardRenewDeadline,
    retryPeriodSeconds: variable(
      "KUBECREW_SHARD_RETRY_PERIOD_SECONDS",
      seconds(2).describe("How often shard Leases are tried or renewed."),
    ),
  },
  webhooks: {
    secretKey: variable(
      "KUBECREW_WEBHOOK_SECRET_KEY",
      z
        .string()
        .default("secret")
        .describe(
          "The key, in a crew's webhook signing Secret, that holds the signing key (also in those kubecrew generates).",
        ),
    ),
    maxAttempts: variable(
      "KUBECREW_WEBHOOK_MAX_ATTEMPTS",
      z.coerce.number().int().min(1).default(8).describe("Deliveries of one webhook tried at most."),
    ),
    initialDelayMs: variable(
      "KUBECREW_WEBHOOK_INITIAL_DELAY_MS",
      z.coerce
        .number()
        .int()
        .min(1)
        .default(1000)
        .describe("The wait before a webhook's second attempt; doubled after each failure."),
    ),
    timeoutMs: variable(
      "KUBECREW_WEBHOOK_TIMEOUT_SECONDS",
      seconds(10)
        .transform((s) => s * 1000)
        .describe("How long one webhook delivery may take."),
    ),
  },
  watchTimeoutSeconds: variable(
    "KUBECREW_WATCH_TIMEOUT_SECONDS",
    z.coerce
      .number()
      .int()
      .min(1)
      .default(300)
      .describe("How long one watch of the apiserver lasts before it is started again."),
  ),
  shutdownTimeoutMs: variable(
    "KUBECREW_SHUTDOWN_TIMEOUT_SECONDS",
    seconds(20)
      .transform((s) => s * 1000)
      .describe("How long reconciles in flight may finish on SIGTERM."),
  ),
  events: {
    perSecond: variable(
      "KUBECREW_EVENTS_PER_SECOND",
      z.coerce
        .number()
        .min(0)
        .default(EVENTS_PER_SECOND)
        .describe("Kubernetes Events posted per second at most (0: none), in bursts of up to KUBECREW_EVENTS_BURST."),
    ),
    burst: variable(
      "KUBECREW_EVENTS_BURST",
      z.coerce.number().int().min(1).default(EVENT_BURST).describe("Events posted at once at most."),
    ),
  },
  outbound: outboundFields(clusterPolicy),
  flows: {
    mockFeedbackAfterMs: variable(
      "KUBECREW_MOCK_FEEDBACK_SECONDS",
      z.coerce
        .number()
        .int()
        .min(0)
        .default(30)
        .transform((s) => s * 1000)
        .describe(
          "On the mock provider, seconds a flow run's human_feedback waits for POST /resume before the mock answers its first outcome; 0: never.",
        ),
    ),
  },
  llmPrices: variable(
    "KUBECREW_LLM_PRICES",
    llmPricesEnv.describe(
      'Model → US dollars per million input/output tokens (JSON: {"<model>": {"input": <usd>, "output": <usd>}}), for the ' +
        "CrewExecution status's `usage.costUsd` and kubecrew_llm_cost_usd_total; empty: no cost.",
    ),
  ),
  apps: appsSettings,
};

/** The controller's configuration: the environment, checked across variables. */
export const controllerConfigSchema = configSchema(controllerFields).transform((c) => {
  if (c.sharding.shards > 1 && !c.leaderElection.enabled) {
    throw new ConfigError(shards.name, `more than 1 shard needs ${leaderElect.name}=true (Leases)`);
  }
  if (c.sharding.shards > 1 && !/^[a-z0-9]([a-z0-9.-]{0,50}[a-z0-9])?$/.test(c.leaderElection.name)) {
    // It names the shard Leases and labels them (a label value: 63 characters at most).
    throw new ConfigError(leaderElectionId.name, "with shards, at most 52 lowercase letters, digits, '-' or '.'");
  }
  if (c.sharding.renewDeadlineSeconds >= c.sharding.leaseDurationSeconds) {
    throw new ConfigError(shardRenewDeadline.name, "must be shorter than the shard lease duration");
  }
  return c;
});

/** What the controller runs with (its type is the schema's: no second description of it). */
export type ControllerConfig = z.infer<typeof controllerConfigSchema>;

/** The controller's settings from its environment; a bad value throws core's ConfigError naming the variable. */
export function controllerConfigFromEnv(env: Record<string, string | undefined>): ControllerConfig {
  return parseConfig(controllerConfigSchema, env);
}
