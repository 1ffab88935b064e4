import { crewSpec as crewSpecSchema, type CrewSpec } from "../core/crew.ts";
import {
  crewWebhookPayload,
  decide,
  successfulResult,
  taskWebhookPayload,
  type Action,
  type DecideInput,
  type ObservedTask,
} from "../core/decide.ts";
import { crewExecution, isFinished, type ExecutionStatus } from "../core/execution.ts";
import type { Logger } from "../core/logger.ts";
import type { Informer } from "../kube/informer.ts";
import { isAlreadyExists, isNotFound, KubeApiError, type KubeClient, type KubeObject } from "../kube/client.ts";
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
import type { EventRecorder } from "./events.ts";
import { mergePatchDiff } from "../kube/merge-patch.ts";
import { observeTasks, type JobObject, type TaskResultObject } from "./observe.ts";
import { contextConfigMapName, taskJobName } from "../kube/task-names.ts";
import { taskInputs, taskJob, type ExecutionRef, type TaskJobSettings } from "./task-job.ts";
import { deliveryId, type DeliveryResult, type WebhookDelivery, type WebhookDispatcher } from "./webhooks.ts";

/** Annotation recording which webhooks were delivered (or given up), so a restarted controller does not resend them. */
export const WEBHOOKS_ANNOTATION = "kubecrew.io/webhook-deliveries";

export interface Caches {
  executions: Informer<KubeObject>;
  crews: Informer<KubeObject>;
  jobs: Informer<JobObject>;
  results: Informer<TaskResultObject>;
}

export interface ReconcilerOptions {
  client: KubeClient;
  caches: Caches;
  jobSettings: TaskJobSettings;
  /** Seconds after an execution finished before its Jobs and ConfigMaps are removed; negative keeps them. */
  finishedTtlSeconds: number;
  now: () => Date;
  log: Logger;
  events: EventRecorder;
  webhooks: WebhookDispatcher;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
  phase?: string;
}

/** The execution's key in the work queue and in the child indexes. */
export const executionKey = (namespace: string, name: string) => `${namespace}/${name}`;

/** A status write lost a race with another writer (a stop, another controller): look again at once. */
export class StaleObjectError extends Error {
  override name = "StaleObjectError";
}

/**
 * One reconcile of one execution: observe it from the caches, ask decide() what to do, do it. Level-based: it never
 * asks what event brought it here, and doing the same actions twice is harmless (deterministic child names,
 * AlreadyExists is success, NotFound on delete is success, status is patched only when it changed).
 */
export class Reconciler {
  private readonly o: ReconcilerOptions;
  private readonly deliveryRecords = new Map<string, Promise<void>>();
  /** Executions (by uid) whose children this process already removed: their deletions may not be in the cache yet. */
  private readonly cleanedUp = new Set<string>();

  constructor(options: ReconcilerOptions) {
    this.o = options;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    const raw = this.o.caches.executions.get(namespace, name);
    if (!raw || raw.metadata?.deletionTimestamp) return {};
    const parsed = crewExecution.safeParse(raw);
    if (!parsed.success) {
      this.o.log.warn(
        { execution: key, problems: parsed.error.issues.map((i) => i.message) },
        "CrewExecution does not match the schema",
      );
      return {};
    }
    const execution = parsed.data;
    const uid = raw.metadata!.uid!;
    const ref: ExecutionRef = { name, namespace, uid, crew: execution.spec.crewRef.name };
    const snapshot = execution.status?.crewSpec;
    const crew = snapshot ? undefined : await this.crewSpec(namespace, execution.spec.crewRef.name);
    const spec = snapshot ?? crew;

    let observed = this.observe(key, spec);
    if (this.missingFailureReports(observed)) {
      // The Job failed but the runner's report is not in the cache yet: read it through so the error names its cause.
      await this.refreshResults(namespace, name);
      observed = this.observe(key, spec);
      // No report at all (the runner could not even write one): the pod's last words are the best message there is.
      if (this.missingFailureReports(observed)) {
        await this.addPodMessages(namespace, name, observed).catch((err: unknown) => {
          // Only a better message was at stake (e.g. no right to list pods): report the Job's own.
          this.o.log.warn({ execution: key, err: String(err) }, "Cannot read the failed pod's last log line");
        });
      }
    }

    const now = this.o.now();
    const input: DecideInput = {
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
      now,
    };
    const decision = decide(input);
    let status = execution.status;
    for (const action of decision.actions) {
      status = await this.carryOut(action, raw, ref, status, spec ?? undefined);
    }
    this.enqueueDueWebhooks(raw, ref, input, status);

    let requeueAfterMs =
      decision.requeueAfterSeconds !== undefined ? Math.ceil(decision.requeueAfterSeconds * 1000) : undefined;
    if (isFinished(status?.phase)) requeueAfterMs = await this.cleanUpWhenDue(ref, status!, now);
    return {
      ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
      ...(status?.phase ? { phase: status.phase } : {}),
    };
  }

  private observe(key: string, spec: CrewSpec | undefined): Record<string, ObservedTask> {
    return observeTasks(spec, this.o.caches.jobs.byIndex(key), this.o.caches.results.byIndex(key));
  }

  private missingFailureReports(observed: Record<string, ObservedTask>): boolean {
    return Object.values(observed).some(unreported);
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
      if (line) task.run = { ...task.run, message: line.length > 1000 ? `${line.slice(0, 997)}...` : line };
    }
  }

  private async refreshResults(namespace: string, name: string): Promise<void> {
    const list = await this.o.client.list<TaskResultObject>(resourcePath(CREW_TASK_RESULTS, namespace), {
      labelSelector: `${LABEL_EXECUTION}=${name}`,
    });
    for (const item of list.items) this.o.caches.results.upsert(item);
  }

  /** The live crew from the cache, read through on a miss (a crew created a moment before its first kickoff). */
  private async crewSpec(namespace: string, crewName: string): Promise<CrewSpec | undefined> {
    let raw = this.o.caches.crews.get(namespace, crewName);
    if (!raw) {
      try {
        raw = await this.o.client.get<KubeObject>(resourcePath(CREWS, namespace, crewName));
        this.o.caches.crews.upsert(raw);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    const parsed = crewSpecSchema.safeParse(raw.spec);
    if (!parsed.success) {
      this.o.log.warn(
        { crew: `${namespace}/${crewName}`, problems: parsed.error.issues.map((i) => i.message) },
        "Crew is invalid",
      );
      return undefined;
    }
    return parsed.data;
  }

  private async carryOut(
    action: Action,
    raw: KubeObject,
    ref: ExecutionRef,
    status: ExecutionStatus | undefined,
    spec: CrewSpec | undefined,
  ): Promise<ExecutionStatus | undefined> {
    const { client, log } = this.o;
    switch (action.type) {
      case "setStatus": {
        const patch = mergePatchDiff(raw.status, action.status);
        if (Object.keys(patch).length === 0) return action.status;
        const updated = await client
          .mergePatch<KubeObject>(resourcePath(CREW_EXECUTIONS, ref.namespace, ref.name, "status"), {
            metadata: { resourceVersion: raw.metadata?.resourceVersion },
            status: patch,
          })
          .catch((err: unknown) => {
            if (err instanceof Error && "statusCode" in err && err.statusCode === 409) {
              throw new StaleObjectError(`status of ${ref.namespace}/${ref.name} changed meanwhile`);
            }
            throw err;
          });
        this.o.caches.executions.upsert(updated);
        raw.metadata = updated.metadata;
        raw.status = updated.status;
        log.debug(
          { execution: ref.name, phase: action.status.phase, task: action.status.currentTask },
          "Status updated",
        );
        return action.status;
      }
      case "startTask": {
        const runner = spec?.runner;
        if (!runner) throw new Error(`no crew spec to start task ${action.taskName}`);
        const assignment = {
          ...action.assignment,
          execution: { ...action.assignment.execution, namespace: ref.namespace, uid: ref.uid },
        };
        const inputs = taskInputs(ref, assignment);
        for (const cm of inputs.configMaps) await createIfAbsent(client, resourcePath(CONFIG_MAPS, ref.namespace), cm);
        const job = taskJob(ref, assignment, runner, this.o.jobSettings, inputs.contextMounts);
        const created = await createIfAbsent(client, resourcePath(JOBS, ref.namespace), job);
        if (created) {
          this.o.caches.jobs.upsert(created as JobObject);
          log.info({ execution: ref.name, task: action.taskName, job: job.metadata?.name }, "Task Job created");
        }
        return status;
      }
      case "stopTask": {
        const jobName = taskJobName(ref.name, action.index);
        try {
          await client.delete(resourcePath(JOBS, ref.namespace, jobName), { propagationPolicy: "Background" });
          log.info({ execution: ref.name, task: action.taskName, job: jobName }, "Task Job deleted");
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        return status;
      }
      case "event":
        this.o.events.record(ref, action.eventType, action.reason, action.message);
        return status;
      case "webhook": {
        const hook = action.kind === "crew" ? "crew" : `task:${String(action.payload.task_id ?? action.payload.name)}`;
        if (!this.deliveredHooks(raw).has(hook)) {
          this.o.webhooks.enqueue({
            hook,
            kind: action.kind,
            namespace: ref.namespace,
            execution: ref.name,
            crew: ref.crew,
            url: action.url,
            payload: action.payload,
          });
        }
        return status;
      }
    }
  }

  /** Level-based webhook delivery: every hook the written status calls for and nobody has delivered yet. */
  private enqueueDueWebhooks(
    raw: KubeObject,
    ref: ExecutionRef,
    input: DecideInput,
    status: ExecutionStatus | undefined,
  ): void {
    const hooks = input.execution.spec.webhooks;
    const spec = status?.crewSpec;
    if (!hooks || !status || !spec) return;
    const done = this.deliveredHooks(raw);
    const due = (hook: string) =>
      !done.has(hook) && !this.o.webhooks.has(deliveryId({ namespace: ref.namespace, execution: ref.name, hook }));
    const base = { namespace: ref.namespace, execution: ref.name, crew: ref.crew };
    if (hooks.task) {
      for (const [index, task] of (status.tasks ?? []).entries()) {
        const hook = `task:${task.name}`;
        if (task.phase !== "Succeeded" || !due(hook)) continue;
        this.o.webhooks.enqueue({
          ...base,
          hook,
          kind: "task",
          url: hooks.task,
          payload: taskWebhookPayload(input, spec, index),
        });
      }
    }
    if (hooks.crew && isFinished(status.phase) && due("crew")) {
      const last = spec.tasks.at(-1)?.name;
      const output = status.phase === "Succeeded" && last ? successfulResult(input.observed[last])?.output : undefined;
      this.o.webhooks.enqueue({
        ...base,
        hook: "crew",
        kind: "crew",
        url: hooks.crew,
        payload: crewWebhookPayload(input, spec, status, output),
      });
    }
  }

  private deliveredHooks(raw: KubeObject): Set<string> {
    const text = raw.metadata?.annotations?.[WEBHOOKS_ANNOTATION];
    if (!text) return new Set();
    try {
      return new Set(Object.keys(JSON.parse(text) as Record<string, string>));
    } catch {
      return new Set();
    }
  }

  /** Records a finished delivery on the execution; records of one execution are written one after another. */
  recordDelivery(delivery: WebhookDelivery, result: DeliveryResult): Promise<void> {
    const key = executionKey(delivery.namespace, delivery.execution);
    const previous = this.deliveryRecords.get(key) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(async () => {
        const raw = this.o.caches.executions.get(delivery.namespace, delivery.execution);
        if (!raw) return;
        const records: Record<string, string> = {};
        try {
          Object.assign(records, JSON.parse(raw.metadata?.annotations?.[WEBHOOKS_ANNOTATION] ?? "{}"));
        } catch {
          // a hand-edited annotation: start over
        }
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
   * After the TTL, removes the Jobs and ConfigMaps of a finished execution (results stay); else when to look again.
   * ConfigMaps go first, so an execution without Jobs in the cache has nothing left to remove (after a restart too).
   */
  private async cleanUpWhenDue(ref: ExecutionRef, status: ExecutionStatus, now: Date): Promise<number | undefined> {
    const ttl = this.o.finishedTtlSeconds;
    if (ttl < 0 || this.cleanedUp.has(ref.uid)) return undefined;
    if (this.o.caches.jobs.byIndex(executionKey(ref.namespace, ref.name)).length === 0) return undefined;
    const finishedAt = Date.parse(status.completionTime ?? "") || now.getTime();
    const dueIn = finishedAt + ttl * 1000 - now.getTime();
    if (dueIn > 0) return dueIn;
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
    this.o.log.info({ execution: ref.name }, "Removed the Jobs and ConfigMaps of a finished execution");
    return undefined;
  }

  private async deleteChildrenByName(ref: ExecutionRef, status: ExecutionStatus): Promise<void> {
    const spec = status.crewSpec;
    const jobs = this.o.caches.jobs.byIndex(executionKey(ref.namespace, ref.name)).map((j) => j.metadata!.name!);
    const names = new Set<string>(jobs);
    for (const [i, task] of (spec?.tasks ?? []).entries()) {
      const job = taskJobName(ref.name, i);
      names.add(job);
      const contextEntries = task.context?.length ?? i;
      for (let j = 0; j < contextEntries; j++) names.add(contextConfigMapName(ref.name, i, j));
    }
    for (const n of names) {
      for (const [type, policy] of [
        [CONFIG_MAPS, undefined],
        [JOBS, "Background"],
      ] as const) {
        await this.o.client
          .delete(resourcePath(type, ref.namespace, n), policy ? { propagationPolicy: policy } : {})
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
    }
  }
}

/**
 * The line that says why a runner failed, from the end of its log: the last plain line (the runner's one-line
 * error on stderr); failing that, the last JSON log line at error level (its message and error).
 */
export function lastWords(log: string): string | undefined {
  const lines = log
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  let logged: string | undefined;
  for (const line of lines.toReversed()) {
    if (!line.startsWith("{")) return line;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if (!logged && (entry.level ?? 0) >= 50) logged = [entry.msg, entry.err?.message].filter(Boolean).join(": ");
    } catch {
      return line; // a JSON line cut by the 2 KiB tail: still the best there is
    }
  }
  return logged || lines.at(-1);
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

async function createIfAbsent(client: KubeClient, path: string, body: KubeObject): Promise<KubeObject | undefined> {
  try {
    return await client.create(path, body);
  } catch (err) {
    if (isAlreadyExists(err)) return undefined;
    throw err;
  }
}

function splitKey(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}
