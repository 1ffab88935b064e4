import type { Logger } from "../core/logger.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { Kubeconfig, type KubeAccess } from "../kube/runtime/kubeconfig.ts";
import { CREW_EXECUTIONS, LEASE_GROUP_LABEL } from "../kube/resources.ts";
import { KubeClient, type WriteVerb } from "../kube/runtime/client.ts";
import { EventRecorder } from "../kube/runtime/events.ts";
import { informerHealthChecks } from "../kube/runtime/health-checks.ts";
import { startHealthServer } from "../kube/runtime/health-server.ts";
import { cacheKey } from "../kube/runtime/informer.ts";
import { LeaderElector } from "../kube/runtime/leader-election.ts";
import { resourceOfPath } from "../kube/runtime/metrics.ts";
import { ShardElector } from "../kube/runtime/shard-elector.ts";
import { ShardOwnership } from "../kube/runtime/shard-ownership.ts";
import { WorkQueue } from "../kube/runtime/work-queue.ts";
import { runWorker } from "../kube/runtime/worker.ts";
import { AppCredentials } from "./app-credentials.ts";
import { createCaches, informersOf } from "./caches.ts";
import type { ControllerConfig } from "./config.ts";
import { CrewReconciler } from "./crew-reconciler.ts";
import { CrewSigningSecrets } from "./crew-signing-secret.ts";
import { ExecutionReconciler } from "./execution-reconciler.ts";
import { flowController } from "./flow-controller.ts";
import { HumanInputCredentials } from "./human-input-credentials.ts";
import { ControllerMetrics } from "./metrics.ts";
import { StartLimit } from "./start-limit.ts";
import { queueOnChange } from "./triggers.ts";
import { WebhookSecrets } from "./webhook-secrets.ts";
import { WebhookDispatcher } from "./webhooks.ts";

export interface ControllerDeps {
  log: Logger;
  kubeConfig?: KubeAccess;
  now?: () => Date;
  /** Called when the controller cannot go on (it lost the lease): the command exits. */
  onFatal?: (reason: string) => void;
  /** Sees every apiserver write (benchmarks count them). */
  onWrite?: (verb: WriteVerb, path: string) => void;
}

export interface RunningController {
  /** The health and metrics server. */
  url: string;
  metrics: ControllerMetrics;
  isLeader(): boolean;
  /** Waits until this replica leads and its caches are synced. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

export function loadKubeConfig(path?: string): KubeAccess {
  return path ? Kubeconfig.fromFile(path) : Kubeconfig.fromDefault();
}

/**
 * `kubecrew controller`, wired: informers → work queues → workers running the execution and crew reconcilers;
 * webhooks delivered off the reconcile path; leader-elected; health and metrics on 8081.
 */
export async function startController(config: ControllerConfig, deps: ControllerDeps): Promise<RunningController> {
  const log = deps.log;
  const now = deps.now ?? (() => new Date());
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(config.kubeconfigPath);
  const onResponse = (method: string, path: string, code: number, ms: number) =>
    metrics.apiRequestDuration.observe({ method, resource: resourceOfPath(path), code }, ms / 1000);
  const client = new KubeClient(kubeConfig, {
    onWrite: (verb, path) => {
      metrics.apiWrites.inc({ verb, resource: resourceOfPath(path) });
      deps.onWrite?.(verb, path);
    },
    onResponse,
  });
  const caches = createCaches({
    client,
    log,
    namespace: config.namespace,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
  });
  const queues = {
    executions: new WorkQueue({ onWait: (lane, ms) => metrics.queueWait.observe({ lane }, ms / 1000) }),
    crews: new WorkQueue(),
  };
  let elector: LeaderElector | undefined;
  let shardElector: ShardElector | undefined;
  let leading = !config.leaderElection.enabled;
  // Sharded (shards > 1): every replica runs; each reconciles only the executions and crews of the shards it holds.
  const { shards } = config.sharding;
  const ownership =
    shards > 1
      ? new ShardOwnership({
          shards,
          kinds: {
            executions: { cache: caches.executions, queue: queues.executions },
            crews: { cache: caches.crews, queue: queues.crews },
          },
        })
      : undefined;
  const ownsExecution = ownership?.ownerOf("executions");
  const ownsCrew = ownership?.ownerOf("crews");
  const isLeader = () => (ownership ? ownership.heldShards.length > 0 : leading);
  let running = false;
  let readyWaiters: (() => void)[] = [];

  // Tasks starting at once, counted from the caches; an execution without a slot waits there, not in the queue.
  const executionKeys = ownership ? ownership.filtered().executions : queues.executions;
  const startLimit = new StartLimit({
    max: config.maxStartingTasks,
    wake: (key, running) => (running ? executionKeys.addUrgent(key) : executionKeys.add(key)),
    ...(ownsExecution ? { owns: ownsExecution } : {}),
  });
  startLimit.watch(caches);

  const metrics = new ControllerMetrics({
    phases: () => caches.executions.list().map((e) => (e.status as { phase?: string } | undefined)?.phase),
    queueDepth: () => queues.executions.depth,
    inFlight: () => queues.executions.inFlight,
    starts: () => ({ starting: startLimit.startingCount, waiting: startLimit.waitingCount }),
    isLeader,
    ...(ownership ? { shards: () => ({ count: shards, held: ownership.heldShards }) } : {}),
  });

  // Events go through a client of their own with few connections, so they never queue in front of the writes that
  // move executions forward; when the apiserver falls behind they are dropped (counted), not the executions.
  const eventClient = new KubeClient(kubeConfig, {
    maxSockets: 4,
    onWrite: (verb, path) => {
      metrics.apiWrites.inc({ verb, resource: resourceOfPath(path) });
      deps.onWrite?.(verb, path);
    },
    onResponse,
  });
  const events = new EventRecorder({
    client: eventClient,
    log,
    instance: config.leaderElection.identity,
    component: "kubecrew-controller",
    reportingController: "kubecrew.io/kubecrew-controller",
    involvedKind: CREW_EXECUTIONS,
    now,
    onDropped: () => metrics.eventsDropped.inc(),
    perSecond: config.events.perSecond,
    burst: config.events.burst,
  });
  const outbound = createOutboundClient(config.outbound);
  const { secretKey } = config.webhooks;
  const secrets = new WebhookSecrets({ client, crews: caches.crews, secretKey });
  const humanInputCredentials = new HumanInputCredentials(client);
  const webhooks = new WebhookDispatcher({
    log,
    fetch: outbound.fetch,
    maxAttempts: config.webhooks.maxAttempts,
    initialDelayMs: config.webhooks.initialDelayMs,
    timeoutMs: config.webhooks.timeoutMs,
    now,
    ...(ownsExecution ? { owns: (d) => ownsExecution(cacheKey(d.namespace, d.execution)) } : {}),
    secretFor: (namespace, crew) => secrets.secretFor(namespace, crew),
    flowSecretFor: (namespace, flow) => flowSide.webhooks.secretFor(namespace, flow),
    authorizationFor: (namespace, ref) => humanInputCredentials.authorizationFor(namespace, ref),
    onFinished: async (delivery, result) => {
      metrics.webhookDeliveries.inc({ result });
      if (delivery.flow !== undefined) await flowSide.webhooks.recordDelivery(delivery, result);
      else await executions.recordDelivery(delivery, result);
    },
  });
  const executions = new ExecutionReconciler({
    client,
    caches,
    jobSettings: {
      defaultImage: config.runnerImage,
      crewaiImage: config.crewaiRunnerImage,
      defaultServiceAccount: config.runnerServiceAccount,
      ...(config.runnerImagePullPolicy ? { imagePullPolicy: config.runnerImagePullPolicy } : {}),
      runnerCommand: ["kubecrew", "runner", "--kubernetes", "--assignment"],
      extraEnv: [{ name: "LOG_LEVEL", value: config.runnerLogLevel }, ...config.runnerTelemetry],
      ...(config.runnerModelVolume ? { modelVolume: config.runnerModelVolume } : {}),
    },
    finishedTtlSeconds: config.finishedTtlSeconds,
    now,
    log,
    events,
    webhooks,
    startLimit,
    usage: { tokens: metrics.llmTokens, cost: metrics.llmCost, prices: config.llmPrices },
    ...(config.apps
      ? { appCredentials: new AppCredentials({ client, settings: config.apps, fetch: outbound.fetch, log }) }
      : {}),
  });
  const crews = new CrewReconciler({
    client,
    crews: caches.crews,
    signingSecrets: new CrewSigningSecrets({ client, secretKey, log }),
    events,
    now,
  });
  queueOnChange(caches, ownership ? ownership.filtered() : queues);
  const flowSide = flowController({
    client,
    caches,
    events,
    log,
    namespace: config.namespace,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    now,
    webhooks,
    webhookSecretKey: secretKey,
    mockFeedbackAfterMs: config.flows.mockFeedbackAfterMs,
  });

  const workers: Promise<void>[] = [];
  const startLoops = async () => {
    if (running) return;
    running = true;
    await Promise.all([...informersOf(caches), ...flowSide.informers].map(([, i]) => i.start()));
    log.info(
      { executions: caches.executions.list().length, namespace: config.namespace || "(all)" },
      "Caches synced; starting workers",
    );
    // The configured workers take any key; more (a quarter as many by default) take only urgent ones (a task's result,
    // a Job's end), so work in progress never waits behind kickoffs whose round trips hold every other worker.
    for (let i = 0; i < config.workers + config.urgentWorkers; i++) {
      workers.push(
        runWorker({
          queue: queues.executions,
          reconciler: executions,
          log,
          kind: "execution",
          metrics,
          urgentOnly: i >= config.workers,
          ...(ownsExecution ? { owns: ownsExecution } : {}),
        }),
      );
    }
    workers.push(
      runWorker({
        queue: queues.crews,
        reconciler: crews,
        log,
        kind: "crew",
        ...(ownsCrew ? { owns: ownsCrew } : {}),
      }),
    );
    workers.push(...flowSide.startWorkers(ownsExecution));
    for (const w of readyWaiters.splice(0)) w();
  };

  const health = await startHealthServer({
    host: config.health.host,
    port: config.health.port,
    registry: metrics.registry,
    checks: informerHealthChecks({
      informers: informersOf(caches),
      watchTimeoutSeconds: config.watchTimeoutSeconds,
      running: () => running,
      standby: () => !ownership && config.leaderElection.enabled && !leading,
    }),
  });

  if (ownership) {
    await startLoops();
    shardElector = new ShardElector({
      client,
      namespace: config.leaderElection.namespace,
      name: config.leaderElection.name,
      groupLabel: LEASE_GROUP_LABEL,
      identity: config.leaderElection.identity,
      ...config.sharding,
      log,
      now,
      onGained: (shard) => ownership.gain(shard),
      onLost: (shard) => {
        ownership.lose(shard);
        startLimit.ownershipChanged();
      },
    });
    shardElector.start();
  } else if (config.leaderElection.enabled) {
    elector = new LeaderElector({
      client,
      ...config.leaderElection,
      log,
      onStartedLeading: () => {
        leading = true;
        startLoops().catch((err: unknown) => {
          log.error({ err }, "Cannot start the controller loops");
          deps.onFatal?.(`cannot start: ${String(err)}`);
        });
      },
      onStoppedLeading: () => {
        leading = false;
        deps.onFatal?.("lost the leader lease");
      },
    });
    elector.start();
  } else {
    await startLoops();
  }

  let stopping: Promise<void> | undefined;
  return {
    url: health.url,
    metrics,
    isLeader,
    ready: () =>
      running && caches.executions.hasSynced ? Promise.resolve() : new Promise((resolve) => readyWaiters.push(resolve)),
    stop: () =>
      (stopping ??= (async () => {
        log.info("Controller stopping");
        queues.executions.shutDown();
        queues.crews.shutDown();
        flowSide.shutDown();
        const drained = Promise.all(workers);
        const timeout = new Promise((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
        await Promise.race([drained, timeout]);
        webhooks.stop();
        await outbound.close();
        await events.flush();
        await Promise.all([...informersOf(caches), ...flowSide.informers].map(([, i]) => i.stop()));
        await elector?.stop();
        await shardElector?.stop();
        await health.stop();
        client.close();
        eventClient.close();
        readyWaiters = [];
        log.info("Controller stopped");
      })()),
  };
}
