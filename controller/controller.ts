import { KubeConfig } from "@kubernetes/client-node";
import { createOutboundClient } from "../core/outbound/outbound-fetch.ts";
import { isFinished } from "../core/execution.ts";
import type { Logger } from "../core/logger.ts";
import type { ControllerConfig } from "./config.ts";
import type { CrewStatus } from "../core/crew.ts";
import { desiredCrewStatus } from "./crew-status.ts";
import { EventRecorder } from "./events.ts";
import { mergePatchDiff } from "../kube/merge-patch.ts";
import { startHealthServer } from "./health-server.ts";
import { Informer } from "../kube/informer.ts";
import { isNotFound, KubeClient, type KubeObject, type WriteVerb } from "../kube/client.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  JOBS,
  LABEL_EXECUTION,
  resourcePath,
  SECRETS,
} from "../kube/resources.ts";
import { LeaderElector } from "./leader-election.ts";
import { ControllerMetrics, resourceOfPath } from "./metrics.ts";
import type { JobObject, TaskResultObject } from "./observe.ts";
import { executionKey, Reconciler, StaleObjectError, type Caches } from "./reconciler.ts";
import { WebhookDispatcher } from "./webhooks.ts";
import { WorkQueue } from "./work-queue.ts";

/** Crew annotation naming the Secret that holds the crew's webhook signing key (default `<crew>-webhook`). */
export const WEBHOOK_SECRET_ANNOTATION = "kubecrew.io/webhook-secret";

export interface ControllerDeps {
  log: Logger;
  kubeConfig?: KubeConfig;
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

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** `kubecrew controller`: informers → work queue → workers running the reconciler; leader-elected; health on 8081. */
export async function startController(config: ControllerConfig, deps: ControllerDeps): Promise<RunningController> {
  const log = deps.log;
  const now = deps.now ?? (() => new Date());
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(config.kubeconfigPath);
  const client = new KubeClient(kubeConfig, {
    onWrite: (verb, path) => {
      metrics.apiWrites.inc({ verb, resource: resourceOfPath(path) });
      deps.onWrite?.(verb, path);
    },
  });
  const queue = new WorkQueue();
  const crewQueue = new WorkQueue();
  const ns = config.namespace || undefined;
  const byExecution = (o: KubeObject) => {
    const execution = o.metadata?.labels?.[LABEL_EXECUTION];
    return execution ? [executionKey(o.metadata!.namespace!, execution)] : [];
  };
  const informerBase = { client, log, watchTimeoutSeconds: config.watchTimeoutSeconds };
  const caches: Caches = {
    executions: new Informer<KubeObject>({ ...informerBase, path: resourcePath(CREW_EXECUTIONS, ns) }),
    crews: new Informer<KubeObject>({ ...informerBase, path: resourcePath(CREWS, ns) }),
    jobs: new Informer<JobObject>({
      ...informerBase,
      path: resourcePath(JOBS, ns),
      labelSelector: LABEL_EXECUTION,
      indexKeys: byExecution,
    }),
    results: new Informer<TaskResultObject>({
      ...informerBase,
      path: resourcePath(CREW_TASK_RESULTS, ns),
      labelSelector: LABEL_EXECUTION,
      indexKeys: byExecution,
    }),
  };
  let elector: LeaderElector | undefined;
  let leading = !config.leaderElection.enabled;
  let running = false;
  let readyWaiters: (() => void)[] = [];

  const metrics = new ControllerMetrics({
    phases: () => caches.executions.list().map((e) => (e.status as { phase?: string } | undefined)?.phase),
    queueDepth: () => queue.depth,
    inFlight: () => queue.inFlight,
    isLeader: () => leading,
  });

  const events = new EventRecorder({ client, log, instance: config.leaderElection.identity, now });
  const secrets = new Map<string, { value: string | undefined; at: number }>();
  const outbound = createOutboundClient(config.outbound);
  const webhooks = new WebhookDispatcher({
    log,
    fetch: outbound.fetch,
    maxAttempts: config.webhooks.maxAttempts,
    initialDelayMs: config.webhooks.initialDelayMs,
    timeoutMs: config.webhooks.timeoutMs,
    now,
    secretFor: async (namespace, crew) => {
      const secretName =
        caches.crews.get(namespace, crew)?.metadata?.annotations?.[WEBHOOK_SECRET_ANNOTATION] ?? `${crew}-webhook`;
      const cacheKey = `${namespace}/${secretName}`;
      const cached = secrets.get(cacheKey);
      if (cached && Date.now() - cached.at < 30_000) return cached.value;
      let value: string | undefined;
      try {
        const secret = await client.get<{ data?: Record<string, string> }>(
          resourcePath(SECRETS, namespace, secretName),
        );
        const encoded = secret.data?.[config.webhooks.secretKey];
        value = encoded ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      secrets.set(cacheKey, { value, at: Date.now() });
      return value ?? config.webhooks.defaultSigningKey;
    },
    onFinished: async (delivery, result) => {
      metrics.webhookDeliveries.inc({ result });
      await reconciler.recordDelivery(delivery, result);
    },
  });
  const reconciler = new Reconciler({
    client,
    caches,
    jobSettings: {
      defaultImage: config.runnerImage,
      defaultServiceAccount: config.runnerServiceAccount,
      ...(config.runnerImagePullPolicy ? { imagePullPolicy: config.runnerImagePullPolicy } : {}),
      runnerCommand: ["kubecrew", "runner", "--kubernetes", "--assignment"],
      extraEnv: [{ name: "LOG_LEVEL", value: config.runnerLogLevel }],
    },
    finishedTtlSeconds: config.finishedTtlSeconds,
    now,
    log,
    events,
    webhooks,
  });

  // Every change of an execution or of one of its children puts the execution's key in the queue.
  caches.executions.on((_event, o) => queue.add(executionKey(o.metadata!.namespace!, o.metadata!.name!)));
  for (const informer of [caches.jobs, caches.results] as Informer<KubeObject>[]) {
    informer.on((_event, o) => byExecution(o).forEach((k) => queue.add(k)));
  }
  // A crew that appears or changes matters only to executions that have not taken their snapshot yet.
  caches.crews.on((event, crew) => {
    if (event !== "delete") crewQueue.add(executionKey(crew.metadata!.namespace!, crew.metadata!.name!));
    for (const e of caches.executions.list(crew.metadata?.namespace)) {
      const spec = e.spec as { crewRef?: { name?: string } } | undefined;
      const status = e.status as { crewSpec?: unknown; phase?: string } | undefined;
      if (spec?.crewRef?.name === crew.metadata?.name && !status?.crewSpec && !isFinished(status?.phase as never)) {
        queue.add(executionKey(e.metadata!.namespace!, e.metadata!.name!));
      }
    }
  });

  const workers: Promise<void>[] = [];
  const work = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      const started = performance.now();
      let result = "success";
      try {
        const outcome = await reconciler.reconcile(key);
        log.debug({ execution: key, ms: Math.round(performance.now() - started), ...outcome }, "Reconciled");
        queue.forget(key);
        if (outcome.requeueAfterMs !== undefined) queue.addAfter(key, outcome.requeueAfterMs);
      } catch (err) {
        if (err instanceof StaleObjectError) {
          // The watch brings the newer version (and with it another look); the backoff only guards a stuck watch.
          result = "conflict";
          queue.addRateLimited(key);
        } else {
          result = "error";
          const retryInMs = queue.addRateLimited(key);
          log.warn(
            { execution: key, err: err instanceof Error ? err.message : String(err), retryInMs },
            "Reconcile failed",
          );
        }
      } finally {
        queue.done(key);
        metrics.reconciles.inc({ result });
        metrics.reconcileDuration.observe({ result }, (performance.now() - started) / 1000);
      }
    }
  };

  /** Keeps each Crew's status (Ready, inputs, task count) equal to what its spec says. */
  const crewWork = async () => {
    for (;;) {
      const key = await crewQueue.get();
      if (key === undefined) return;
      const [namespace, name] = [key.slice(0, key.indexOf("/")), key.slice(key.indexOf("/") + 1)];
      try {
        const raw = caches.crews.get(namespace, name);
        if (raw && !raw.metadata?.deletionTimestamp) {
          const previous = raw.status as CrewStatus | undefined;
          const desired = desiredCrewStatus(
            { spec: raw.spec, generation: raw.metadata?.generation },
            previous,
            now().toISOString(),
          );
          const patch = mergePatchDiff(previous, desired);
          if (Object.keys(patch).length > 0) {
            const updated = await client.mergePatch<KubeObject>(resourcePath(CREWS, namespace, name, "status"), {
              metadata: { resourceVersion: raw.metadata?.resourceVersion },
              status: patch,
            });
            caches.crews.upsert(updated);
          }
        }
        crewQueue.forget(key);
      } catch (err) {
        const retryInMs = crewQueue.addRateLimited(key);
        log.warn(
          { crew: key, err: err instanceof Error ? err.message : String(err), retryInMs },
          "Crew status update failed",
        );
      } finally {
        crewQueue.done(key);
      }
    }
  };

  const startLoops = async () => {
    if (running) return;
    running = true;
    await Promise.all(Object.values(caches).map((i: Informer<KubeObject>) => i.start()));
    log.info(
      { executions: caches.executions.list().length, namespace: config.namespace || "(all)" },
      "Caches synced; starting workers",
    );
    for (let i = 0; i < config.workers; i++) workers.push(work());
    workers.push(crewWork());
    for (const w of readyWaiters.splice(0)) w();
  };

  const stallLimitMs = (config.watchTimeoutSeconds + 60) * 1000;
  const health = await startHealthServer({
    host: config.health.host,
    port: config.health.port,
    registry: metrics.registry,
    checks: {
      live: () => {
        if (!running) return undefined;
        const stuck = Object.entries(caches).find(
          ([, i]) => Date.now() - (i as Informer<KubeObject>).lastActivity > stallLimitMs,
        );
        return stuck ? `informer ${stuck[0]} has seen no traffic for too long` : undefined;
      },
      ready: () => {
        if (config.leaderElection.enabled && !leading) return undefined; // a standby replica is ready to take over
        const unsynced = Object.entries(caches).find(([, i]) => !(i as Informer<KubeObject>).hasSynced);
        return unsynced ? `informer ${unsynced[0]} has not synced` : undefined;
      },
    },
  });

  if (config.leaderElection.enabled) {
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
    isLeader: () => leading,
    ready: () =>
      running && caches.executions.hasSynced ? Promise.resolve() : new Promise((resolve) => readyWaiters.push(resolve)),
    stop: () =>
      (stopping ??= (async () => {
        log.info("Controller stopping");
        queue.shutDown();
        crewQueue.shutDown();
        const drained = Promise.all(workers);
        const timeout = new Promise((resolve) => setTimeout(resolve, config.shutdownTimeoutMs).unref());
        await Promise.race([drained, timeout]);
        webhooks.stop();
        await outbound.close();
        await events.flush();
        await Promise.all(Object.values(caches).map((i: Informer<KubeObject>) => i.stop()));
        await elector?.stop();
        await health.stop();
        client.close();
        readyWaiters = [];
        log.info("Controller stopped");
      })()),
  };
}
