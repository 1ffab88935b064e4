import { hostname } from "node:os";
import { z } from "zod";
import { ConfigError, logLevel, parseConfig } from "../core/config.ts";
import { appsEnv, appsSettingsFrom, type AppsSettings } from "../core/execution-apps.ts";
import { outboundEnvSchema, outboundPolicyFrom } from "../core/outbound/config.ts";
import { clusterPolicy, type OutboundPolicy } from "../core/outbound/policy.ts";
import { EVENT_BURST, EVENTS_PER_SECOND } from "../kube/runtime/events.ts";

const seconds = (fallback: number) => z.coerce.number().min(0).default(fallback);

/** The controller's environment, parsed once at startup. */
export const controllerEnv = z.object({
  LOG_LEVEL: logLevel,
  KUBECONFIG: z.string().optional(),
  /** Namespace to watch; empty for every namespace. */
  KUBECREW_NAMESPACE: z.string().default(""),
  KUBECREW_CONTROLLER_WORKERS: z.coerce.number().int().min(1).max(256).default(32),
  /** Workers beside those that take only urgent keys (a task's result, a Job's end); default a quarter of the workers. */
  KUBECREW_CONTROLLER_URGENT_WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  /**
   * Tasks starting at once at most (Job created, pod not running yet); 0: no limit. Sharded: per replica. 300: at
   * 2,100 executions/min with 3–8 s from a Job's creation to its pod running, 100–280 are starting (Little's law);
   * 100 cut bench:controller-scale's throughput by a third.
   */
  KUBECREW_CONTROLLER_MAX_STARTING_TASKS: z.coerce.number().int().min(0).default(300),
  KUBECREW_RUNNER_IMAGE: z.string().min(1).default("kubecrew:0.1.0"),
  /** The image of task pods of crews with `runtime: crewai` (the runner with CrewAI in Python beside it). */
  KUBECREW_CREWAI_RUNNER_IMAGE: z.string().min(1).default("kubecrew-crewai:0.1.0"),
  KUBECREW_RUNNER_IMAGE_PULL_POLICY: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
  KUBECREW_RUNNER_SERVICE_ACCOUNT: z.string().min(1).default("kubecrew-runner"),
  KUBECREW_RUNNER_LOG_LEVEL: logLevel,
  KUBECREW_FINISHED_TTL_SECONDS: z.coerce.number().int().default(86_400),
  KUBECREW_HEALTH_HOST: z.string().default("0.0.0.0"),
  KUBECREW_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  KUBECREW_LEADER_ELECT: z.stringbool().default(true),
  KUBECREW_LEADER_ELECTION_NAMESPACE: z.string().optional(),
  KUBECREW_LEADER_ELECTION_ID: z.string().default("kubecrew-controller"),
  KUBECREW_LEASE_DURATION_SECONDS: seconds(15),
  KUBECREW_RENEW_DEADLINE_SECONDS: seconds(10),
  KUBECREW_RETRY_PERIOD_SECONDS: seconds(2),
  /** Shards of executions across replicas: 1 is one leader doing everything (the leader Lease above). */
  KUBECREW_CONTROLLER_SHARDS: z.coerce.number().int().min(1).max(64).default(1),
  // Shard leases: a SIGKILLed replica's shards are taken over within duration + 2 × retry period (12 s).
  KUBECREW_SHARD_LEASE_DURATION_SECONDS: z.coerce.number().int().min(1).default(8),
  KUBECREW_SHARD_RENEW_DEADLINE_SECONDS: seconds(6),
  KUBECREW_SHARD_RETRY_PERIOD_SECONDS: seconds(2),
  /** This replica's name in the lease; a pod's name (POD_NAME) or the host name by default. */
  KUBECREW_CONTROLLER_ID: z.string().optional(),
  POD_NAME: z.string().optional(),
  POD_NAMESPACE: z.string().optional(),
  /** The key, in a crew's webhook signing Secret, that holds the signing key (also in the ones kubecrew generates). */
  KUBECREW_WEBHOOK_SECRET_KEY: z.string().default("secret"),
  KUBECREW_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).default(8),
  KUBECREW_WEBHOOK_INITIAL_DELAY_MS: z.coerce.number().int().min(1).default(1000),
  KUBECREW_WEBHOOK_TIMEOUT_SECONDS: seconds(10),
  KUBECREW_WATCH_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(300),
  KUBECREW_SHUTDOWN_TIMEOUT_SECONDS: seconds(20),
  /** Events posted per second at most (0: none), in bursts of up to KUBECREW_EVENTS_BURST. */
  KUBECREW_EVENTS_PER_SECOND: z.coerce.number().min(0).default(EVENTS_PER_SECOND),
  KUBECREW_EVENTS_BURST: z.coerce.number().int().min(1).default(EVENT_BURST),
  ...appsEnv,
  ...outboundEnvSchema(clusterPolicy),
});

export interface ControllerConfig {
  logLevel: string;
  kubeconfigPath?: string;
  namespace: string;
  workers: number;
  /** Workers beside `workers` that take only urgent keys. */
  urgentWorkers: number;
  /** The limit on tasks starting at once (start-limit.ts); 0: none. */
  maxStartingTasks: number;
  runnerImage: string;
  /** The runner image of `runtime: crewai` crews. */
  crewaiRunnerImage: string;
  runnerImagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  runnerServiceAccount: string;
  runnerLogLevel: string;
  finishedTtlSeconds: number;
  health: { host: string; port: number };
  leaderElection: {
    enabled: boolean;
    namespace: string;
    name: string;
    identity: string;
    leaseDurationSeconds: number;
    renewDeadlineSeconds: number;
    retryPeriodSeconds: number;
  };
  /** Sharding (shards > 1): Leases `<leaderElection.name>-shard-<i>` in leaderElection.namespace. */
  sharding: {
    shards: number;
    leaseDurationSeconds: number;
    renewDeadlineSeconds: number;
    retryPeriodSeconds: number;
  };
  webhooks: {
    secretKey: string;
    maxAttempts: number;
    initialDelayMs: number;
    timeoutMs: number;
  };
  watchTimeoutSeconds: number;
  shutdownTimeoutMs: number;
  /** The Events' budget (events.ts). */
  events: { perSecond: number; burst: number };
  /** Where webhooks may be delivered. */
  outbound: OutboundPolicy;
  /** Connected apps, when KUBECREW_APPS_URL is set. */
  apps?: AppsSettings;
}

export function controllerConfigFromEnv(env: Record<string, string | undefined>): ControllerConfig {
  const c = parseConfig(controllerEnv, env);
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
    runnerLogLevel: c.KUBECREW_RUNNER_LOG_LEVEL,
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
    ...(apps ? { apps } : {}),
  };
}
