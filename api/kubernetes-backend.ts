import { randomUUID } from "node:crypto";
import { crew as crewSchema, crewSpec, type Crew, type CrewSpec } from "../core/crew.ts";
import { crewExecution, executionStatus, type CrewExecution } from "../core/execution.ts";
import {
  idempotentExecutionId,
  judgeRecorded,
  type IdempotentKickoff,
  type RecordedKickoff,
} from "../core/idempotency.ts";
import type { Logger } from "../core/logger.ts";
import { taskResultSpec, type TaskResultSpec } from "../core/task-result.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { KubeAccess } from "../kube/kubeconfig.ts";
import { readThrough } from "../kube/runtime/read-through.ts";
import { isAlreadyExists, isNotFound, KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import {
  ANNOTATION_IDEMPOTENCY_KEY,
  ANNOTATION_IDEMPOTENCY_REQUEST,
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  LABEL_CREW,
  LABEL_EXECUTION,
  LABEL_IDEMPOTENCY_KEY,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  resourcePath,
} from "../kube/resources.ts";
import type { ExecutionBackend, ExecutionView, KickoffOutcome, NewExecution } from "./execution-backend.ts";
import { ExecutionChanges } from "./execution-changes.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import { crewForCache, executionForCache, resultForCache } from "./cache-transforms.ts";

/**
 * The API's backend in cluster mode: Crews, CrewExecutions and CrewTaskResults of one namespace held in informer
 * caches, so polling `/status` costs the apiserver nothing. Right after a kickoff the cache may not have the new
 * execution yet: a miss is read through to the apiserver (and remembered briefly when it is a true miss).
 */
export interface KubernetesBackendOptions {
  kubeConfig: KubeAccess;
  namespace: string;
  log: Logger;
  /** How long a confirmed "no such execution" is remembered before the apiserver is asked again. */
  negativeCacheMs?: number;
  now?: () => Date;
}

/** An execution without its status's crew snapshot, which is parsed once per distinct snapshot. */
const executionWithoutSnapshot = crewExecution.extend({
  status: executionStatus.omit({ crewSpec: true }).optional(),
});

/** Runs under one Idempotency-Key older than the window, at most, before a kickoff gives up (each a day apart). */
const MAX_KEY_GENERATIONS = 64;

export type KubernetesBackend = ExecutionBackend & {
  stop(): Promise<void>;
  /** Apiserver reads made on cache misses (tests check that polling does not add to it). */
  readThroughs(): number;
};

export async function createKubernetesBackend(options: KubernetesBackendOptions): Promise<KubernetesBackend> {
  const { namespace, log } = options;
  const client = new KubeClient(options.kubeConfig);
  const byExecution = (o: KubeObject) => {
    const execution = o.metadata?.labels?.[LABEL_EXECUTION];
    return execution ? [execution] : [];
  };
  // The caches keep only what the API reads (api/cache-transforms.ts).
  const crews = new Informer<KubeObject>({
    client,
    log,
    path: resourcePath(CREWS, namespace),
    transform: crewForCache,
  });
  const executions = new Informer<KubeObject>({
    client,
    log,
    path: resourcePath(CREW_EXECUTIONS, namespace),
    transform: executionForCache(new CrewSpecSnapshots()),
  });
  const results = new Informer<KubeObject>({
    client,
    log,
    path: resourcePath(CREW_TASK_RESULTS, namespace),
    labelSelector: LABEL_EXECUTION,
    indexKeys: byExecution,
    transform: resultForCache,
  });
  // Event streams are told of each change the informers see, instead of polling the caches.
  const changes = new ExecutionChanges();
  // How often each execution's results changed: a view is built again only when they (or the execution) did.
  const resultVersions = new Map<string, number>();
  executions.on((event, object) => {
    const id = object.metadata?.name;
    if (!id) return;
    if (event === "delete") resultVersions.delete(id);
    changes.notify(id);
  });
  results.on((_event, object) => {
    for (const id of byExecution(object)) {
      resultVersions.set(id, (resultVersions.get(id) ?? 0) + 1);
      changes.notify(id);
    }
  });
  await Promise.all([crews.start(), executions.start(), results.start()]);
  const misses = new Map<string, number>();
  const negativeCacheMs = options.negativeCacheMs ?? 1000;
  let readThroughs = 0;
  const crewSource = { cache: crews, client, type: CREWS, onMiss: () => readThroughs++ };
  const now = options.now ?? (() => new Date());

  // Every request reads its crew: each version of a Crew is parsed (and an invalid one logged) once, not per request.
  const parsedCrews = new WeakMap<KubeObject, Crew | null>();
  const parseCrew = (raw: KubeObject): Crew | undefined => {
    let parsed = parsedCrews.get(raw);
    if (parsed === undefined) {
      const result = crewSchema.safeParse(raw);
      if (!result.success)
        log.warn({ crew: raw.metadata?.name, problems: result.error.issues.map((i) => i.message) }, "Crew is invalid");
      parsed = result.success ? result.data : null;
      parsedCrews.set(raw, parsed);
    }
    return parsed ?? undefined;
  };

  // Informer objects are replaced, never changed, on update: each version is parsed once however many readers
  // (event streams, /status polls) look at it.
  const parsedResults = new WeakMap<KubeObject, TaskResultSpec | null>();
  const parsedResult = (item: KubeObject): TaskResultSpec | undefined => {
    let parsed = parsedResults.get(item);
    if (parsed === undefined) {
      const result = taskResultSpec.safeParse(item.spec);
      parsed = result.success ? result.data : null;
      parsedResults.set(item, parsed);
    }
    return parsed ?? undefined;
  };
  // The crew snapshot in an execution's status is shared by the cache (cache-transforms.ts): it is parsed once per
  // distinct snapshot, and the parsed executions share the parsed snapshot.
  const parsedSnapshots = new WeakMap<object, CrewSpec | null>();
  const parsedSnapshot = (snapshot: unknown): CrewSpec | null => {
    if (typeof snapshot !== "object" || snapshot === null) return null;
    let parsed = parsedSnapshots.get(snapshot);
    if (parsed === undefined) {
      const result = crewSpec.safeParse(snapshot);
      parsed = result.success ? result.data : null;
      parsedSnapshots.set(snapshot, parsed);
    }
    return parsed;
  };
  const parsedExecutions = new WeakMap<KubeObject, CrewExecution | null>();
  const parsedExecution = (raw: KubeObject): CrewExecution | undefined => {
    let parsed = parsedExecutions.get(raw);
    if (parsed === undefined) {
      const snapshot = (raw.status as { crewSpec?: unknown } | undefined)?.crewSpec;
      const spec = snapshot === undefined ? undefined : parsedSnapshot(snapshot);
      const result = executionWithoutSnapshot.safeParse(raw);
      parsed =
        result.success && spec !== null
          ? {
              ...result.data,
              ...(result.data.status ? { status: { ...result.data.status, ...(spec ? { crewSpec: spec } : {}) } } : {}),
            }
          : null;
      parsedExecutions.set(raw, parsed);
    }
    return parsed ?? undefined;
  };

  const byTask = (items: KubeObject[]): Record<string, TaskResultSpec[]> => {
    const tasks: Record<string, TaskResultSpec[]> = {};
    for (const item of items) {
      const parsed = parsedResult(item);
      if (parsed) (tasks[parsed.taskName] ??= []).push(parsed);
    }
    return tasks;
  };

  const view = (execution: CrewExecution, results: Record<string, TaskResultSpec[]>): ExecutionView => ({
    id: execution.metadata.name,
    crew: execution.spec.crewRef.name,
    ...(execution.spec.requestedBy ? { requestedBy: execution.spec.requestedBy } : {}),
    spec: execution.spec,
    ...(execution.metadata.creationTimestamp ? { created: execution.metadata.creationTimestamp } : {}),
    ...(execution.status ? { status: execution.status } : {}),
    results,
  });
  /** The view with the results in the cache. */
  const viewFromCache = (execution: CrewExecution) => view(execution, byTask(results.byIndex(execution.metadata.name)));
  /** The view with the results read from the apiserver (an execution the cache did not have yet). */
  const viewFromServer = async (execution: CrewExecution): Promise<ExecutionView> => {
    readThroughs++;
    const list = await client.list<KubeObject>(resourcePath(CREW_TASK_RESULTS, namespace), {
      labelSelector: `${LABEL_EXECUTION}=${execution.metadata.name}`,
    });
    return view(execution, byTask(list.items));
  };
  // The same view object while neither the execution object nor its results changed: every event stream and status
  // poll of one execution shares it (and what is derived from it, keyed by it, such as its /status body).
  const views = new WeakMap<CrewExecution, { version: number; view: ExecutionView }>();
  const cachedView = (execution: CrewExecution): ExecutionView => {
    const version = resultVersions.get(execution.metadata.name) ?? 0;
    const cached = views.get(execution);
    if (cached?.version === version) return cached.view;
    const fresh = viewFromCache(execution);
    views.set(execution, { version, view: fresh });
    return fresh;
  };
  /** The crew's execution in the cache, parsed; undefined when the cache does not have it (or it is another's). */
  const executionInCache = (crewName: string, id: string): CrewExecution | undefined => {
    const raw = executions.get(namespace, id);
    const parsed = raw && parsedExecution(raw);
    return parsed?.spec.crewRef.name === crewName ? parsed : undefined;
  };

  const createExecutionObject = async (id: string, execution: NewExecution) => {
    const key = execution.idempotency;
    const body = {
      apiVersion: CREW_EXECUTIONS.apiVersion,
      kind: CREW_EXECUTIONS.kind,
      metadata: {
        name: id,
        namespace,
        labels: {
          [LABEL_CREW]: execution.crew,
          [LABEL_MANAGED_BY]: MANAGED_BY,
          ...(key ? { [LABEL_IDEMPOTENCY_KEY]: key.keyHash.slice(0, 63) } : {}),
        },
        ...(key ? { annotations: idempotencyAnnotations(key) } : {}),
      },
      spec: { ...execution.spec, crewRef: { name: execution.crew } },
    };
    const created = await client.create<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace), body);
    executions.upsert(created);
    misses.delete(id);
  };

  /** Creates the keyed run under `id`; answers undefined when created, or the execution already there. */
  const createOrReadBack = async (id: string, execution: NewExecution): Promise<KubeObject | undefined> => {
    for (let attempt = 0; ; attempt++) {
      try {
        await createExecutionObject(id, execution);
        return undefined;
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      try {
        readThroughs++;
        const existing = await client.get<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace, id));
        executions.upsert(existing);
        return existing;
      } catch (err) {
        // Deleted between the two calls: try creating it again (a few times; then the error goes up).
        if (!isNotFound(err) || attempt >= 2) throw err;
      }
    }
  };

  return {
    async getCrew(name) {
      const raw = await readThrough(crewSource, namespace, name);
      return raw && parseCrew(raw);
    },

    heldCrew(name) {
      const raw = crews.get(namespace, name);
      return raw && parseCrew(raw);
    },

    heldExecution(crewName, id) {
      const execution = executionInCache(crewName, id);
      return execution && cachedView(execution);
    },

    async listCrews() {
      return crews.list(namespace).flatMap((raw) => parseCrew(raw) ?? []);
    },

    async createExecution(execution: NewExecution): Promise<KickoffOutcome> {
      const key = execution.idempotency;
      if (!key) {
        const id = randomUUID();
        await createExecutionObject(id, execution);
        return { kind: "started", id };
      }
      // Every replica derives the same name from the key, so of two racing kickoffs the apiserver creates one and
      // answers AlreadyExists to the other, which then reads the winner back. A run older than the window moves the
      // key on to the next name.
      for (let generation = 0; generation < MAX_KEY_GENERATIONS; generation++) {
        const id = idempotentExecutionId(key.keyHash, generation);
        const existing = executions.get(namespace, id) ?? (await createOrReadBack(id, execution));
        if (!existing) return { kind: "started", id };
        const verdict = judgeRecorded(recordedKickoff(existing), key, now());
        if (verdict === "replay") return { kind: "replayed", id };
        if (verdict === "reused") return { kind: "keyReused", id };
      }
      throw new Error(`no free execution name for an Idempotency-Key after ${MAX_KEY_GENERATIONS} generations`);
    },

    async getExecution(crewName, id) {
      let raw = executions.get(namespace, id);
      let fromServer = false;
      if (!raw) {
        const missedAt = misses.get(id);
        if (missedAt !== undefined && Date.now() - missedAt < negativeCacheMs) return undefined;
        try {
          readThroughs++;
          raw = await client.get<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace, id));
          executions.upsert(raw);
          fromServer = true;
        } catch (err) {
          if (!isNotFound(err)) throw err;
          misses.set(id, Date.now());
          if (misses.size > 10_000) misses.clear();
          return undefined;
        }
      }
      const parsed = parsedExecution(raw);
      if (!parsed || parsed.spec.crewRef.name !== crewName) return undefined;
      return fromServer ? viewFromServer(parsed) : cachedView(parsed);
    },

    async listExecutions(crewName) {
      const mine = executions
        .list(namespace)
        .flatMap((raw) => {
          const parsed = parsedExecution(raw);
          return parsed?.spec.crewRef.name === crewName ? [parsed] : [];
        })
        .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
      return mine.map(viewFromCache);
    },

    async stopExecution(_crew, id) {
      const updated = await client.mergePatch<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace, id), {
        spec: { stop: true },
      });
      executions.upsert(updated);
    },

    onExecutionChange: (id, listener) => changes.subscribe(id, listener),

    readThroughs: () => readThroughs,

    async stop() {
      await Promise.all([crews.stop(), executions.stop(), results.stop()]);
      client.close();
    },
  };
}

function idempotencyAnnotations(key: IdempotentKickoff): Record<string, string> {
  return { [ANNOTATION_IDEMPOTENCY_KEY]: key.keyHash, [ANNOTATION_IDEMPOTENCY_REQUEST]: key.requestHash };
}

/** The keyed kickoff an execution records, if it records one. */
function recordedKickoff(raw: KubeObject): RecordedKickoff | undefined {
  const annotations = raw.metadata?.annotations ?? {};
  const keyHash = annotations[ANNOTATION_IDEMPOTENCY_KEY];
  const requestHash = annotations[ANNOTATION_IDEMPOTENCY_REQUEST];
  const created = raw.metadata?.creationTimestamp;
  if (!keyHash || !requestHash || !created) return undefined;
  return { keyHash, requestHash, createdAt: new Date(created) };
}
