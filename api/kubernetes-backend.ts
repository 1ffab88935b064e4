import type { KubeConfig } from "@kubernetes/client-node";
import { crew as crewSchema, type Crew } from "../core/crew.ts";
import { crewExecution, type CrewExecution } from "../core/execution.ts";
import type { Logger } from "../core/logger.ts";
import { taskResultSpec, type TaskResultSpec } from "../core/task-result.ts";
import { Informer } from "../kube/informer.ts";
import { readThrough } from "../kube/read-through.ts";
import { isNotFound, KubeClient, type KubeObject } from "../kube/client.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  CREWS,
  LABEL_CREW,
  LABEL_EXECUTION,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  resourcePath,
} from "../kube/resources.ts";
import type { ExecutionBackend, ExecutionView, NewExecution } from "./execution-backend.ts";

/**
 * The API's backend in cluster mode: Crews, CrewExecutions and CrewTaskResults of one namespace held in informer
 * caches, so polling `/status` costs the apiserver nothing. Right after a kickoff the cache may not have the new
 * execution yet: a miss is read through to the apiserver (and remembered briefly when it is a true miss).
 */
export interface KubernetesBackendOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  log: Logger;
  /** How long a confirmed "no such execution" is remembered before the apiserver is asked again. */
  negativeCacheMs?: number;
}

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
  const crews = new Informer<KubeObject>({ client, log, path: resourcePath(CREWS, namespace) });
  const executions = new Informer<KubeObject>({ client, log, path: resourcePath(CREW_EXECUTIONS, namespace) });
  const results = new Informer<KubeObject>({
    client,
    log,
    path: resourcePath(CREW_TASK_RESULTS, namespace),
    labelSelector: LABEL_EXECUTION,
    indexKeys: byExecution,
  });
  await Promise.all([crews.start(), executions.start(), results.start()]);
  const misses = new Map<string, number>();
  const negativeCacheMs = options.negativeCacheMs ?? 1000;
  let readThroughs = 0;
  const crewSource = { cache: crews, client, type: CREWS, onMiss: () => readThroughs++ };

  const parseCrew = (raw: KubeObject): Crew | undefined => {
    const parsed = crewSchema.safeParse(raw);
    if (!parsed.success)
      log.warn({ crew: raw.metadata?.name, problems: parsed.error.issues.map((i) => i.message) }, "Crew is invalid");
    return parsed.success ? parsed.data : undefined;
  };

  const resultsOf = async (id: string, fromServer: boolean): Promise<Record<string, TaskResultSpec[]>> => {
    let items = results.byIndex(id);
    if (fromServer) {
      readThroughs++;
      const list = await client.list<KubeObject>(resourcePath(CREW_TASK_RESULTS, namespace), {
        labelSelector: `${LABEL_EXECUTION}=${id}`,
      });
      items = list.items;
    }
    const byTask: Record<string, TaskResultSpec[]> = {};
    for (const item of items) {
      const parsed = taskResultSpec.safeParse(item.spec);
      if (parsed.success) (byTask[parsed.data.taskName] ??= []).push(parsed.data);
    }
    return byTask;
  };

  const view = async (execution: CrewExecution, fromServer: boolean): Promise<ExecutionView> => ({
    id: execution.metadata.name,
    crew: execution.spec.crewRef.name,
    ...(execution.spec.requestedBy ? { requestedBy: execution.spec.requestedBy } : {}),
    spec: execution.spec,
    ...(execution.status ? { status: execution.status } : {}),
    results: await resultsOf(execution.metadata.name, fromServer),
  });

  return {
    async getCrew(name) {
      const raw = await readThrough(crewSource, namespace, name);
      return raw && parseCrew(raw);
    },

    async listCrews() {
      return crews.list(namespace).flatMap((raw) => parseCrew(raw) ?? []);
    },

    async createExecution(execution: NewExecution) {
      const body = {
        apiVersion: CREW_EXECUTIONS.apiVersion,
        kind: CREW_EXECUTIONS.kind,
        metadata: {
          name: execution.id,
          namespace,
          labels: { [LABEL_CREW]: execution.crew, [LABEL_MANAGED_BY]: MANAGED_BY },
        },
        spec: { ...execution.spec, crewRef: { name: execution.crew } },
      };
      const created = await client.create<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace), body);
      executions.upsert(created);
      misses.delete(execution.id);
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
      const parsed = crewExecution.safeParse(raw);
      if (!parsed.success || parsed.data.spec.crewRef.name !== crewName) return undefined;
      return view(parsed.data, fromServer);
    },

    async stopExecution(_crew, id) {
      const updated = await client.mergePatch<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace, id), {
        spec: { stop: true },
      });
      executions.upsert(updated);
    },

    readThroughs: () => readThroughs,

    async stop() {
      await Promise.all([crews.stop(), executions.stop(), results.stop()]);
      client.close();
    },
  };
}
