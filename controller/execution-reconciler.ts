import { cleanupDueInMs } from "../core/cleanup.ts";
import type { CrewSpec } from "../core/crew.ts";
import type { Action, DecideInput } from "../core/decision.ts";
import { isFinished, type ExecutionStatus } from "../core/execution.ts";
import { decideInvalidExecution } from "../core/invalid-execution.ts";
import type { Logger } from "../core/logger.ts";
import { successfulResult, type ObservedTask } from "../core/observed-task.ts";
import { contextTaskNames } from "../core/task-graph.ts";
import { truncate } from "../core/truncate.ts";
import { KubeApiError, type KubeApi, type KubeObject } from "../kube/runtime/client.ts";
import { cacheKey, splitKey } from "../kube/runtime/informer.ts";
import { readThrough } from "../kube/runtime/read-through.ts";
import { decodedOrUndefined, isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import {
  CONFIG_MAPS,
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  JOBS,
  LABEL_EXECUTION,
  LABEL_TASK,
  PODS,
  resourcePath,
} from "../kube/resources.ts";
import { contextConfigMapName, projectJobName, taskJobName } from "../kube/task-names.ts";
import type { CachedExecution } from "../kube/typed-objects.ts";
import type { AppCredentials } from "./app-credentials.ts";
import { applyStatus, deleteIfPresent } from "../kube/apply.ts";
import type { Caches } from "./caches.ts";
import type { EventRecorder } from "../kube/runtime/events.ts";
import { lastWords } from "./last-words.ts";
import { observeTasks } from "./observe.ts";
import type { StartLimit } from "./start-limit.ts";
import type { ExecutionRef, TaskJobSettings } from "./task-job.ts";
import { decideWithinLimit, startTask } from "./task-start.ts";
import type { DeliveryResult, WebhookDelivery, WebhookDispatcher } from "./webhooks.ts";
import type { ReconcileResult } from "../kube/runtime/worker.ts";
import { withUsage } from "../core/execution-usage.ts";
import { runsWhole } from "../core/whole-project.ts";
import { countFinishedExecution, resultsByTask, type UsageCounters } from "./usage-metrics.ts";
import { executionLogger, executionSpanTraceparent, recordExecutionSpan } from "./execution-trace.ts";
import { traceparentField } from "../platform/telemetry/trace-context.ts";

/** Annotation recording which webhooks were delivered (or given up), so a restarted controller does not resend them. */
export const WEBHOOKS_ANNOTATION = "kubecrew.io/webhook-deliveries";

export interface ExecutionReconcilerOptions {
  client: KubeApi;
  caches: Caches;
  jobSettings: TaskJobSettings;
  /** Seconds after an execution finished before its Jobs and ConfigMaps are removed; negative keeps them. */
  finishedTtlSeconds: number;
  now: () => Date;
  log: Logger;
  events: Pick<EventRecorder, "record">;
  webhooks: Pick<WebhookDispatcher, "enqueue">;
  /** Connected apps: the credential Secret of executions whose crew declares apps (absent: not configured). */
  appCredentials?: AppCredentials;
  /** The limit on tasks starting at once (absent: none). */
  startLimit?: Pick<StartLimit, "tryStart" | "settle" | "forget">;
  /** The usage counters and price table: counted, and priced on the status, as an execution finishes. */
  usage?: UsageCounters;
}

/**
 * One reconcile of one execution: observe it (the caches, read through where they lag), decide (decide() for its
 * progress and due webhooks, cleanupDueInMs() for its children), apply (applyStatus, createIfAbsent, deletes).
 * Level-based: it never asks what event brought it here, and doing the same actions twice is harmless (deterministic
 * child names, AlreadyExists is success, NotFound on delete is success, status is patched only when it changed).
 */
export class ExecutionReconciler {
  private readonly o: ExecutionReconcilerOptions;
  private readonly deliveryRecords = new Map<string, Promise<void>>();
  /** Executions (by uid) whose children this process already removed: their deletions may not be in the cache yet. */
  private readonly cleanedUp = new Set<string>();

  constructor(options: ExecutionReconcilerOptions) {
    this.o = options;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const cached = this.o.caches.executions.get(namespace, name);
    const going = !cached || !!cached.metadata.deletionTimestamp;
    // Gone, going or invalid: it starts nothing, and gives up its turn for a slot if it waited for one.
    if (going || isUndecodable(cached)) this.o.startLimit?.forget(key);
    if (going) return {};
    if (isUndecodable(cached)) return this.failInvalid(cached);
    const current = { execution: cached };
    const ref: ExecutionRef = { name, namespace, uid: cached.metadata.uid!, crew: cached.spec.crewRef.name };

    const input = await this.observe(cached, ref);
    const { decision, slot } = decideWithinLimit(input, cached, key, this.o.startLimit);
    let status = cached.status;
    try {
      for (const action of decision.actions) status = await this.apply(action, current, ref, input, status);
    } finally {
      if (slot) this.o.startLimit?.settle(key);
    }

    let requeueAfterMs =
      decision.requeueAfterSeconds !== undefined ? Math.ceil(decision.requeueAfterSeconds * 1000) : undefined;
    if (isFinished(status?.phase)) {
      const spec = status?.crewSpec;
      if (spec) await this.o.appCredentials?.retire(ref, spec, status?.startTime, input.now);
      const childrenLeft = !this.cleanedUp.has(ref.uid) && this.o.caches.jobs.byIndex(key).length > 0;
      const dueInMs = cleanupDueInMs({ status, ttlSeconds: this.o.finishedTtlSeconds, childrenLeft, now: input.now });
      requeueAfterMs = dueInMs || undefined;
      if (dueInMs === 0) await this.removeChildren(ref, status!, executionLogger(this.o.log, current.execution));
    }
    return {
      ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
      ...(status?.phase ? { phase: status.phase } : {}),
    };
  }

  /**
   * An execution whose spec (or status) does not decode fails at once with what is wrong, and a Warning Event says
   * it (decideInvalidExecution): once, as a finished execution decides nothing more.
   */
  private async failInvalid(execution: Undecodable): Promise<ReconcileResult> {
    const { name = "", namespace = "", uid = "", generation } = execution.metadata;
    const problems = execution.undecodable;
    const decision = decideInvalidExecution({ status: execution.status, problems, generation, now: this.o.now() });
    if (!decision) return {};
    await applyStatus(this.o.client, this.o.caches.executions, CREW_EXECUTIONS, execution, decision.status);
    const { eventType, reason, message } = decision.event;
    this.o.events.record({ name, namespace, uid }, eventType, reason, message);
    executionLogger(this.o.log, execution).warn(
      { execution: `${namespace}/${name}`, problems },
      "CrewExecution is invalid; failed it",
    );
    return { phase: "Failed" };
  }

  /** decide()'s input: the execution, its crew (until it took its snapshot), its tasks, the webhooks delivered. */
  private async observe(execution: CachedExecution, ref: ExecutionRef): Promise<DecideInput> {
    const { name, namespace, uid } = ref;
    const key = cacheKey(namespace, name);
    const snapshot = execution.status?.crewSpec;
    const crew = snapshot ? undefined : await this.crewSpec(namespace, ref.crew);
    const spec = snapshot ?? crew;
    const tasks = () => observeTasks(spec, this.o.caches.jobs.byIndex(key), this.o.caches.results.byIndex(key));
    let observed = tasks();
    if (missingFailureReports(observed)) {
      // The Job failed but the runner's report is not in the cache yet: read it through so the error names its cause.
      await this.refreshResults(namespace, name);
      observed = tasks();
      // No report at all (the runner could not even write one): the pod's last words are the best message there is.
      if (missingFailureReports(observed)) {
        await this.addPodMessages(namespace, name, observed).catch((err: unknown) => {
          // Only a better message was at stake (e.g. no right to list pods): report the Job's own.
          const log = executionLogger(this.o.log, execution);
          log.warn({ execution: key, err: String(err) }, "Cannot read the failed pod's last log line");
        });
      }
    }
    return {
      execution: {
        name,
        namespace,
        uid,
        ...(execution.metadata.generation !== undefined ? { generation: execution.metadata.generation } : {}),
        spec: execution.spec,
        ...(execution.status ? { status: execution.status } : {}),
      },
      crew,
      observed,
      deliveredWebhooks: deliveredHooks(execution),
      now: this.o.now(),
    };
  }

  /** The termination message (the end of its log, FallbackToLogsOnError) of the last failed pod of each such task. */
  private async addPodMessages(namespace: string, name: string, observed: Record<string, ObservedTask>): Promise<void> {
    const pods = await this.o.client.list<PodObject>(resourcePath(PODS, namespace), {
      labelSelector: `${LABEL_EXECUTION}=${name}`,
    });
    for (const [taskName, task] of Object.entries(observed)) {
      if (!unreported(task) || !task.run) continue;
      const last = pods.items
        .filter((p) => p.metadata?.labels?.[LABEL_TASK] === taskName)
        .flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => c.state?.terminated))
        .filter((t): t is NonNullable<typeof t> => !!t && t.exitCode !== 0 && !!t.message)
        .sort((a, b) => (a.finishedAt ?? "").localeCompare(b.finishedAt ?? ""))
        .at(-1);
      const line = last?.message ? lastWords(last.message) : undefined;
      if (line) task.run = { ...task.run, message: truncate(line) };
    }
  }

  private async refreshResults(namespace: string, name: string): Promise<void> {
    const list = await this.o.client.list<KubeObject>(resourcePath(CREW_TASK_RESULTS, namespace), {
      labelSelector: `${LABEL_EXECUTION}=${name}`,
    });
    for (const item of list.items) this.o.caches.results.upsert(item);
  }

  /**
   * The live crew (a crew created a moment before its first kickoff is read through), or undefined: none, or one that
   * does not decode (its own reconciler reports that, on the Crew).
   */
  private async crewSpec(namespace: string, crewName: string): Promise<CrewSpec | undefined> {
    const source = { cache: this.o.caches.crews, client: this.o.client, type: CREWS };
    return decodedOrUndefined(await readThrough(source, namespace, crewName))?.spec;
  }

  /** Carries one action out; answers the status as it stands after it. */
  private async apply(
    action: Action,
    current: { execution: CachedExecution },
    ref: ExecutionRef,
    input: DecideInput,
    status: ExecutionStatus | undefined,
  ): Promise<ExecutionStatus | undefined> {
    const { client } = this.o;
    const log = executionLogger(this.o.log, current.execution);
    switch (action.type) {
      case "setStatus": {
        const { execution } = current;
        // The finished phase is written once, with what the execution's LLM calls used (core/execution-usage.ts).
        const finishing = isFinished(action.status.phase) && !isFinished(status?.phase);
        const spec = action.status.crewSpec ?? input.crew;
        const desired = finishing
          ? withUsage(action.status, spec, resultsByTask(input.observed), this.o.usage?.prices ?? {})
          : action.status;
        const updated = await applyStatus(client, this.o.caches.executions, CREW_EXECUTIONS, execution, desired);
        if (updated) {
          if (this.o.usage && finishing) countFinishedExecution(this.o.usage, ref.crew, spec, input.observed);
          // Once, as the phase is written once: the execution's span (its children named it from the start).
          if (finishing) recordExecutionSpan(execution, ref.crew, desired);
          // The next write of this reconcile is guarded by the version just written.
          const written = decodedOrUndefined(updated);
          if (written) current.execution = written;
          log.debug(
            { execution: ref.name, phase: action.status.phase, task: action.status.currentTask },
            "Status updated",
          );
        }
        return desired;
      }
      case "startTask":
        await startTask({ ...this.o, log }, action, current.execution, ref, input);
        return status;
      case "stopTask": {
        // A whole run (spec.runner.crew, core/whole-project.ts) is stopped as its first task's: its Job is the project's.
        const runSpec = input.execution.status?.crewSpec ?? input.crew;
        const project = runSpec !== undefined && runsWhole(runSpec);
        const jobName = project ? projectJobName(ref.name) : taskJobName(ref.name, action.index, action.revision ?? 0);
        const path = resourcePath(JOBS, ref.namespace, jobName);
        if (await deleteIfPresent(client, path, { propagationPolicy: "Background" })) {
          log.info({ execution: ref.name, task: action.taskName, job: jobName }, "Task Job deleted");
        }
        return status;
      }
      case "event":
        this.o.events.record(ref, action.eventType, action.reason, action.message);
        return status;
      case "webhook": {
        const { hook, kind, url, payload } = action;
        const credentials = kind === "human_input" ? input.execution.spec.humanInputWebhook?.authentication : undefined;
        this.o.webhooks.enqueue({
          hook,
          kind,
          url,
          payload,
          ...(credentials ? { authorization: credentials.secretRef } : {}),
          namespace: ref.namespace,
          execution: ref.name,
          executionUid: ref.uid,
          crew: ref.crew,
          ...traceparentField(executionSpanTraceparent(current.execution)),
        });
        return status;
      }
    }
  }

  /** Records a finished delivery on the execution; records of one execution are written one after another. */
  recordDelivery(delivery: WebhookDelivery, result: DeliveryResult): Promise<void> {
    const key = cacheKey(delivery.namespace, delivery.execution);
    const previous = this.deliveryRecords.get(key) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const execution = this.o.caches.executions.get(delivery.namespace, delivery.execution);
        if (!execution) return;
        const records = deliveryRecords(execution);
        records[delivery.hook] = result;
        const updated = await this.o.client.mergePatch<KubeObject>(
          resourcePath(CREW_EXECUTIONS, delivery.namespace, delivery.execution),
          {
            metadata: { annotations: { [WEBHOOKS_ANNOTATION]: JSON.stringify(records) } },
          },
        );
        this.o.caches.executions.upsert(updated);
      })
      .finally(() => {
        if (this.deliveryRecords.get(key) === next) this.deliveryRecords.delete(key);
      });
    this.deliveryRecords.set(key, next);
    return next;
  }

  /**
   * Removes the Jobs and ConfigMaps of a finished execution (results stay). ConfigMaps go first, so an execution
   * without Jobs in the cache has nothing left to remove (after a restart too).
   */
  private async removeChildren(ref: ExecutionRef, status: ExecutionStatus, log: Logger): Promise<void> {
    // Every child carries the execution's label: one collection delete per kind (the Jobs' pods go with them).
    const selector = `${LABEL_EXECUTION}=${ref.name}`;
    try {
      await this.o.client.deleteCollection(resourcePath(CONFIG_MAPS, ref.namespace), selector);
      await this.o.client.deleteCollection(resourcePath(JOBS, ref.namespace), selector, "Background");
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 403)) throw err;
      // Without the right to delete collections: one by one, by the names the controller gave them.
      await this.deleteChildrenByName(ref, status);
    }
    this.cleanedUp.add(ref.uid);
    if (this.cleanedUp.size > 10_000) this.cleanedUp.clear();
    log.info({ execution: ref.name }, "Removed the Jobs and ConfigMaps of a finished execution");
  }

  private async deleteChildrenByName(ref: ExecutionRef, status: ExecutionStatus): Promise<void> {
    const spec = status.crewSpec;
    const jobs = this.o.caches.jobs.byIndex(cacheKey(ref.namespace, ref.name)).map((j) => j.metadata!.name!);
    const names = new Set<string>(jobs);
    if (spec && runsWhole(spec)) names.add(projectJobName(ref.name));
    const tasks = spec?.tasks ?? [];
    for (const [i, task] of tasks.entries()) {
      // Every revision a person asked for ran with children of its own.
      const revisions = status.tasks?.find((t) => t.name === task.name)?.revision ?? 0;
      for (let r = 0; r <= revisions; r++) {
        names.add(taskJobName(ref.name, i, r));
        const contextEntries = contextTaskNames({ tasks }, i).length;
        for (let j = 0; j < contextEntries; j++) names.add(contextConfigMapName(ref.name, i, j, r));
      }
    }
    for (const n of names) {
      await deleteIfPresent(this.o.client, resourcePath(CONFIG_MAPS, ref.namespace, n));
      await deleteIfPresent(this.o.client, resourcePath(JOBS, ref.namespace, n), { propagationPolicy: "Background" });
    }
  }
}

/** The webhook deliveries recorded on the execution, by hook key; a hand-edited annotation counts as none. */
function deliveryRecords(raw: KubeObject): Record<string, string> {
  try {
    const records: unknown = JSON.parse(raw.metadata?.annotations?.[WEBHOOKS_ANNOTATION] ?? "{}");
    return records && typeof records === "object" && !Array.isArray(records) ? (records as Record<string, string>) : {};
  } catch {
    return {};
  }
}

const deliveredHooks = (raw: KubeObject) => new Set(Object.keys(deliveryRecords(raw)));

function missingFailureReports(observed: Record<string, ObservedTask>): boolean {
  return Object.values(observed).some(unreported);
}

/** A task whose Job failed on its own (not out of time) with no report from its runner. */
function unreported(t: ObservedTask): boolean {
  return (
    t.run?.state === "failed" &&
    t.run.reason !== "DeadlineExceeded" &&
    !t.results.some((r) => r.error !== undefined) &&
    !successfulResult(t)
  );
}

interface PodObject extends KubeObject {
  status?: {
    containerStatuses?: { state?: { terminated?: { exitCode: number; message?: string; finishedAt?: string } } }[];
  };
}
