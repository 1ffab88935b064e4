import { randomUUID } from "node:crypto";
import type { Crew } from "../core/crew.ts";
import {
  idempotentExecutionId,
  judgeRecorded,
  type IdempotentKickoff,
  type RecordedKickoff,
} from "../core/idempotency.ts";
import type { Logger } from "../core/logger.ts";
import { isOwnTaskResult, type TaskResultSpec } from "../core/task-result.ts";
import {
  ANNOTATION_IDEMPOTENCY_KEY,
  ANNOTATION_IDEMPOTENCY_REQUEST,
  ANNOTATION_TRACEPARENT,
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  LABEL_CREW,
  LABEL_EXECUTION,
  LABEL_IDEMPOTENCY_KEY,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  resourcePath,
  SECRETS,
} from "../kube/resources.ts";
import { isAlreadyExists, isConflict, isNotFound, KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { HUMAN_INPUT_AUTH_KEY, humanInputSecret, humanInputSecretName } from "../kube/human-input-secret.ts";
import type { KubeAccess } from "../kube/runtime/kubeconfig.ts";
import { readThrough } from "../kube/runtime/read-through.ts";
import { decodedOrUndefined, isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { CachedExecution, CachedTaskResult } from "../kube/typed-objects.ts";
import { traceIdOf, traceparentOf } from "../platform/telemetry/trace-context.ts";
import { resultForCache } from "./cache-transforms.ts";
import { ClusterCaches } from "./cluster-caches.ts";
import type {
  DecisionChange,
  ExecutionBackend,
  ExecutionView,
  KickoffOutcome,
  NewExecution,
} from "./execution-backend.ts";

/**
 * The API's backend in cluster mode: Crews, CrewExecutions and CrewTaskResults of one namespace held in informer
 * caches that decode each object once (cluster-caches.ts), so polling `/status` costs the apiserver nothing. Right
 * after a kickoff the cache may not have the new execution yet: a miss is read through to the apiserver (and
 * remembered briefly when it is a true miss).
 */
export interface KubernetesBackendOptions {
  kubeConfig: KubeAccess;
  namespace: string;
  log: Logger;
  /** How long a confirmed "no such execution" is remembered before the apiserver is asked again. */
  negativeCacheMs?: number;
  now?: () => Date;
}

/** Runs under one Idempotency-Key older than the window, at most, before a kickoff gives up (each a day apart). */
const MAX_KEY_GENERATIONS = 64;

export async function createKubernetesBackend(options: KubernetesBackendOptions): Promise<KubernetesBackend> {
  const backend = new KubernetesBackend(options);
  await backend.caches.start();
  return backend;
}

export class KubernetesBackend implements ExecutionBackend {
  readonly caches: ClusterCaches;
  private readonly client: KubeClient;
  private readonly namespace: string;
  private readonly now: () => Date;
  private readonly negativeCacheMs: number;
  /** Ids the apiserver said it has no execution of, and when. */
  private readonly misses = new Map<string, number>();
  private reads = 0;
  /**
   * The same view object while neither the execution object nor its results changed: every event stream and status
   * poll of one execution shares it (and what is derived from it, keyed by it, such as its /status body).
   */
  private readonly views = new WeakMap<CachedExecution, { version: number; view: ExecutionView }>();

  constructor(options: KubernetesBackendOptions) {
    this.client = new KubeClient(options.kubeConfig);
    this.namespace = options.namespace;
    this.now = options.now ?? (() => new Date());
    this.negativeCacheMs = options.negativeCacheMs ?? 1000;
    this.caches = new ClusterCaches({ client: this.client, namespace: options.namespace, log: options.log });
  }

  async getCrew(name: string): Promise<Crew | undefined> {
    const source = { cache: this.caches.crews, client: this.client, type: CREWS, onMiss: () => this.reads++ };
    return decodedOrUndefined(await readThrough(source, this.namespace, name));
  }

  heldCrew(name: string): Crew | undefined {
    return decodedOrUndefined(this.caches.crews.get(this.namespace, name));
  }

  heldExecution(crewName: string, id: string): ExecutionView | undefined {
    const execution = this.ofCrew(crewName, this.caches.executions.get(this.namespace, id));
    return execution && this.cachedView(execution);
  }

  async listCrews(): Promise<Crew[]> {
    return this.caches.crews.list(this.namespace).flatMap((crew) => decodedOrUndefined(crew) ?? []);
  }

  async createExecution(execution: NewExecution): Promise<KickoffOutcome> {
    const key = execution.idempotency;
    if (!key) {
      const id = randomUUID();
      await this.createExecutionObject(id, execution);
      return { kind: "started", id };
    }
    // Every replica derives the same name from the key, so of two racing kickoffs the apiserver creates one and
    // answers AlreadyExists to the other, which then reads the winner back. A run older than the window moves the
    // key on to the next name.
    for (let generation = 0; generation < MAX_KEY_GENERATIONS; generation++) {
      const id = idempotentExecutionId(key.keyHash, generation);
      const existing = this.caches.executions.get(this.namespace, id) ?? (await this.createOrReadBack(id, execution));
      if (!existing) return { kind: "started", id };
      const verdict = judgeRecorded(recordedKickoff(existing), key, this.now());
      if (verdict === "replay") return { kind: "replayed", id };
      if (verdict === "reused") return { kind: "keyReused", id };
    }
    throw new Error(`no free execution name for an Idempotency-Key after ${MAX_KEY_GENERATIONS} generations`);
  }

  async getExecution(crewName: string, id: string): Promise<ExecutionView | undefined> {
    const cached = this.caches.executions.get(this.namespace, id);
    if (cached) {
      const execution = this.ofCrew(crewName, cached);
      return execution && this.cachedView(execution);
    }
    const missedAt = this.misses.get(id);
    if (missedAt !== undefined && Date.now() - missedAt < this.negativeCacheMs) return undefined;
    let read: KubeObject;
    try {
      this.reads++;
      read = await this.client.get<KubeObject>(resourcePath(CREW_EXECUTIONS, this.namespace, id));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.misses.set(id, Date.now());
      if (this.misses.size > 10_000) this.misses.clear();
      return undefined;
    }
    const execution = this.ofCrew(crewName, this.caches.executions.upsert(read));
    return execution && this.viewFromServer(execution);
  }

  async listExecutions(crewName: string): Promise<ExecutionView[]> {
    return this.caches.executions
      .list(this.namespace)
      .flatMap((execution) => this.ofCrew(crewName, execution) ?? [])
      .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""))
      .map((execution) => this.viewFromCache(execution));
  }

  async stopExecution(_crew: string, id: string): Promise<void> {
    const updated = await this.client.mergePatch<KubeObject>(resourcePath(CREW_EXECUTIONS, this.namespace, id), {
      spec: { stop: true },
    });
    this.caches.executions.upsert(updated);
  }

  /**
   * Judges the execution as the cache holds it and writes the change with its resourceVersion as the precondition:
   * a 409 (another decision, or any write, came first) reads it from the apiserver and judges again.
   */
  async recordDecision<T>(
    crewName: string,
    id: string,
    judge: (execution: ExecutionView) => { change?: DecisionChange; result: T },
  ): Promise<T | undefined> {
    const path = resourcePath(CREW_EXECUTIONS, this.namespace, id);
    const cached = this.caches.executions.get(this.namespace, id);
    let current = cached ?? (await this.readExecution(id));
    let fresh = !cached;
    for (let attempt = 1; ; attempt++) {
      const execution = this.ofCrew(crewName, current);
      const judged = execution ? judge(this.cachedView(execution)) : undefined;
      const change = judged?.change;
      if (!execution || !judged || !change) {
        // A refusal judged from the cache is judged again as the apiserver has it: the cache may lag a status just
        // written (a wait whose webhook came before the cache had it).
        if (fresh) return judged?.result;
        current = await this.readExecution(id);
        fresh = true;
        continue;
      }
      const { result } = judged;
      const { webhooks } = change;
      const patch = {
        metadata: { resourceVersion: execution.metadata.resourceVersion },
        spec: {
          decisions: change.decisions,
          // A merge patch merges objects: the URLs not given are removed, so the given ones replace the execution's.
          ...(webhooks
            ? { webhooks: { task: webhooks.task ?? null, step: webhooks.step ?? null, crew: webhooks.crew ?? null } }
            : {}),
        },
      };
      try {
        this.caches.executions.upsert(await this.client.mergePatch<KubeObject>(path, patch));
        return result;
      } catch (err) {
        if (!isConflict(err) || attempt >= 5) throw err;
      }
      current = await this.readExecution(id);
      fresh = true;
    }
  }

  onExecutionChange(id: string, listener: () => void): () => void {
    return this.caches.changes.subscribe(id, listener);
  }

  /** Apiserver reads made on cache misses (tests check that polling does not add to it). */
  readThroughs(): number {
    return this.reads;
  }

  async stop(): Promise<void> {
    await this.caches.stop();
    this.client.close();
  }

  /** The execution as the apiserver has it now (into the cache), or undefined when there is none. */
  private async readExecution(id: string): Promise<CachedExecution | Undecodable | undefined> {
    try {
      this.reads++;
      return this.caches.executions.upsert(
        await this.client.get<KubeObject>(resourcePath(CREW_EXECUTIONS, this.namespace, id)),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The crew's decoded execution; undefined for another crew's, or one that does not decode. */
  private ofCrew(crewName: string, execution: CachedExecution | Undecodable | undefined): CachedExecution | undefined {
    const decoded = decodedOrUndefined(execution);
    return decoded?.spec.crewRef.name === crewName ? decoded : undefined;
  }

  private cachedView(execution: CachedExecution): ExecutionView {
    const version = this.caches.resultsVersion(execution.metadata.name);
    const cached = this.views.get(execution);
    if (cached?.version === version) return cached.view;
    const fresh = this.viewFromCache(execution);
    this.views.set(execution, { version, view: fresh });
    return fresh;
  }

  /** The view with the results in the cache. */
  private viewFromCache(execution: CachedExecution): ExecutionView {
    return view(execution, byTask(execution, this.caches.results.byIndex(execution.metadata.name)));
  }

  /** The view with the results read from the apiserver (an execution the cache did not have yet). */
  private async viewFromServer(execution: CachedExecution): Promise<ExecutionView> {
    this.reads++;
    const list = await this.client.list<KubeObject>(resourcePath(CREW_TASK_RESULTS, this.namespace), {
      labelSelector: `${LABEL_EXECUTION}=${execution.metadata.name}`,
    });
    return view(execution, byTask(execution, list.items.map(resultForCache)));
  }

  private async createExecutionObject(id: string, execution: NewExecution): Promise<void> {
    const key = execution.idempotency;
    const body = {
      apiVersion: CREW_EXECUTIONS.apiVersion,
      kind: CREW_EXECUTIONS.kind,
      metadata: {
        name: id,
        namespace: this.namespace,
        labels: {
          [LABEL_CREW]: execution.crew,
          [LABEL_MANAGED_BY]: MANAGED_BY,
          ...(key ? { [LABEL_IDEMPOTENCY_KEY]: key.keyHash.slice(0, 63) } : {}),
        },
        ...annotationsOf(key, traceparentOf()),
      },
      spec: { ...execution.spec, crewRef: { name: execution.crew }, ...humanInputWebhook(id, execution) },
    };
    const created = await this.client.create<KubeObject>(resourcePath(CREW_EXECUTIONS, this.namespace), body);
    this.caches.executions.upsert(created);
    this.misses.delete(id);
    const auth = execution.humanInputAuthorization;
    if (auth) await this.keepCredentials(created, auth.header);
  }

  /**
   * The human-input webhook's credentials in a Secret owned by the execution (deleted with it). Without it the
   * execution could not deliver that webhook: a kickoff whose Secret cannot be made stops its execution and fails.
   */
  private async keepCredentials(created: KubeObject, header: string): Promise<void> {
    const owner = { name: created.metadata!.name!, namespace: this.namespace, uid: created.metadata!.uid! };
    try {
      await this.client.create(resourcePath(SECRETS, this.namespace), humanInputSecret(owner, header));
    } catch (err) {
      if (isAlreadyExists(err)) return;
      await this.client
        .mergePatch(resourcePath(CREW_EXECUTIONS, this.namespace, owner.name), { spec: { stop: true } })
        .catch(() => undefined);
      throw err;
    }
  }

  /** Creates the keyed run under `id`; answers undefined when created, or the execution already there. */
  private async createOrReadBack(id: string, execution: NewExecution): Promise<KubeObject | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.createExecutionObject(id, execution);
        return undefined;
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      try {
        this.reads++;
        const existing = await this.client.get<KubeObject>(resourcePath(CREW_EXECUTIONS, this.namespace, id));
        return this.caches.executions.upsert(existing);
      } catch (err) {
        // Deleted between the two calls: try creating it again (a few times; then the error goes up).
        if (!isNotFound(err) || attempt >= 2) throw err;
      }
    }
  }
}

/**
 * The execution's results by task name (every attempt): those that decode and, once the execution has started on its
 * crew, name their own task (as the controller counts them).
 */
function byTask(
  execution: CachedExecution,
  items: readonly (CachedTaskResult | Undecodable)[],
): Record<string, TaskResultSpec[]> {
  const crew = execution.status?.crewSpec;
  const tasks: Record<string, TaskResultSpec[]> = {};
  for (const item of items) {
    if (isUndecodable(item) || (crew && !isOwnTaskResult(crew, item.spec))) continue;
    (tasks[item.spec.taskName] ??= []).push(item.spec);
  }
  return tasks;
}

function view(execution: CachedExecution, results: Record<string, TaskResultSpec[]>): ExecutionView {
  return {
    id: execution.metadata.name,
    crew: execution.spec.crewRef.name,
    ...(execution.spec.requestedBy ? { requestedBy: execution.spec.requestedBy } : {}),
    spec: execution.spec,
    ...(execution.metadata.creationTimestamp ? { created: execution.metadata.creationTimestamp } : {}),
    ...(execution.status ? { status: execution.status } : {}),
    results,
    ...traceIdField(traceIdOf(execution.metadata.annotations?.[ANNOTATION_TRACEPARENT])),
  };
}

const traceIdField = (traceId: string | undefined) => (traceId ? { traceId } : {});

/** The execution's annotations: its Idempotency-Key's hashes, and the trace the kickoff's span (the active one) began. */
function annotationsOf(
  key: IdempotentKickoff | undefined,
  traceparent: string | undefined,
): { annotations?: Record<string, string> } {
  const annotations = {
    ...(key ? idempotencyAnnotations(key) : {}),
    ...(traceparent ? { [ANNOTATION_TRACEPARENT]: traceparent } : {}),
  };
  return Object.keys(annotations).length ? { annotations } : {};
}

function idempotencyAnnotations(key: IdempotentKickoff): Record<string, string> {
  return { [ANNOTATION_IDEMPOTENCY_KEY]: key.keyHash, [ANNOTATION_IDEMPOTENCY_REQUEST]: key.requestHash };
}

/** The keyed kickoff an execution records, if it records one. */
function recordedKickoff(execution: KubeObject): RecordedKickoff | undefined {
  const annotations = execution.metadata?.annotations ?? {};
  const keyHash = annotations[ANNOTATION_IDEMPOTENCY_KEY];
  const requestHash = annotations[ANNOTATION_IDEMPOTENCY_REQUEST];
  const created = execution.metadata?.creationTimestamp;
  if (!keyHash || !requestHash || !created) return undefined;
  return { keyHash, requestHash, createdAt: new Date(created) };
}

/** spec.humanInputWebhook with where its credentials are kept (the Secret keepCredentials makes), if it has any. */
function humanInputWebhook(id: string, execution: NewExecution) {
  const webhook = execution.spec.humanInputWebhook;
  const auth = execution.humanInputAuthorization;
  if (!webhook || !auth) return {};
  const secretRef = { name: humanInputSecretName(id), key: HUMAN_INPUT_AUTH_KEY };
  return { humanInputWebhook: { ...webhook, authentication: { strategy: auth.strategy, secretRef } } };
}
