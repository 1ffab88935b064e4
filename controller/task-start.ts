import { assignmentUsesApps } from "../core/crew-apps.ts";
import { decide } from "../core/decide.ts";
import type { Action, DecideInput, Decision } from "../core/decision.ts";
import type { Logger } from "../core/logger.ts";
import type { KubeApi } from "../kube/runtime/client.ts";
import { cacheKey } from "../kube/runtime/informer.ts";
import { readThrough } from "../kube/runtime/read-through.ts";
import { CONFIG_MAPS, JOBS, resourcePath } from "../kube/resources.ts";
import { runJobName } from "../kube/task-names.ts";
import { appsSecretName } from "../kube/apps-secret.ts";
import type { CachedExecution } from "../kube/typed-objects.ts";
import { createIfAbsent } from "../kube/apply.ts";
import type { AppCredentials } from "./app-credentials.ts";
import type { Caches } from "./caches.ts";
import type { StartLimit } from "./start-limit.ts";
import { taskInputs, taskJob, type ExecutionRef, type TaskJobSettings } from "./task-job.ts";
import { startTaskSpan } from "./execution-trace.ts";

/** What starting a task's Job needs of the execution reconciler. */
export interface TaskStartContext {
  client: KubeApi;
  caches: Pick<Caches, "jobs">;
  jobSettings: TaskJobSettings;
  log: Logger;
  appCredentials?: AppCredentials;
}

export type StartTaskAction = Extract<Action, { type: "startTask" }>;

/**
 * decide(), within the limit on tasks starting at once: each task a decision starts takes a slot, in spec order,
 * until one is refused; then the decision is made again starting only those that got one (the others wait for a
 * slot; see start-limit.ts). `slot`: at least one was taken, to settle.
 */
export function decideWithinLimit(
  input: DecideInput,
  execution: CachedExecution,
  key: string,
  limit: Pick<StartLimit, "tryStart" | "forget"> | undefined,
): { decision: Decision; slot: boolean } {
  const decision = decide(input);
  if (!limit) return { decision, slot: false };
  const starts = decision.actions.filter((a) => a.type === "startTask");
  if (starts.length === 0) {
    limit.forget(key);
    return { decision, slot: false };
  }
  const granted = new Set<string>();
  for (const start of starts) {
    const slot = limit.tryStart({
      execution: key,
      job: cacheKey(input.execution.namespace!, runJobName(input.execution.name, start.assignment)),
      running: ["Running", "WaitingForInput"].includes(input.execution.status?.phase ?? "") || granted.size > 0,
      createdAt: execution.metadata.creationTimestamp ?? "",
    });
    if (!slot) break;
    granted.add(start.taskName);
  }
  const slot = granted.size > 0;
  if (granted.size === starts.length) return { decision, slot };
  return { decision: decide({ ...input, canStartTask: (task) => granted.has(task) }), slot };
}

/**
 * Starts one task: its apps credential (if any), its context ConfigMaps and its Job, each created only if absent, so
 * doing it twice is harmless.
 */
export async function startTask(
  o: TaskStartContext,
  action: StartTaskAction,
  execution: CachedExecution,
  ref: ExecutionRef,
  input: DecideInput,
): Promise<void> {
  const { client, log } = o;
  const runner = (input.execution.status?.crewSpec ?? input.crew)?.runner;
  if (!runner) throw new Error(`no crew spec to start task ${action.taskName}`);
  const assignment = {
    ...action.assignment,
    execution: { ...action.assignment.execution, namespace: ref.namespace, uid: ref.uid },
  };
  const spec = input.execution.status?.crewSpec ?? input.crew!;
  const credentials = o.appCredentials;
  // The execution's one credential Secret comes with its first task (its start is the credential's clock), and
  // is made sure of for each task calling apps (its agent or a coworker): apps may have been switched on since.
  if (credentials && (action.index === 0 || assignmentUsesApps(assignment))) {
    const started = input.execution.status?.startTime;
    await credentials.ensure(ref, spec, input.execution.spec.requestedBy, started ? new Date(started) : input.now);
  }
  const inputs = taskInputs(ref, assignment);
  for (const cm of inputs.configMaps) await createIfAbsent(client, resourcePath(CONFIG_MAPS, ref.namespace), cm);
  const apps = credentials ? { url: credentials.url, secretName: appsSecretName(ref.name) } : undefined;
  const job = taskJob(ref, assignment, runner, o.jobSettings, inputs.contextMounts, apps);
  const span = startTaskSpan(execution, { execution: ref.name, task: action.taskName }, job);
  const created = await createIfAbsent(client, resourcePath(JOBS, ref.namespace), job).finally(() => span.end());
  if (created) {
    o.caches.jobs.upsert(created);
    log.info({ execution: ref.name, task: action.taskName, job: job.metadata?.name }, "Task Job created");
  } else {
    // Created by a controller before this one (a restart, a shard moved) and not in the cache yet: read it in,
    // so that the limit on tasks starting at once counts it before this reconcile's slot is given back.
    const source = { cache: o.caches.jobs, client, type: JOBS };
    await readThrough(source, ref.namespace, job.metadata!.name!);
  }
}
