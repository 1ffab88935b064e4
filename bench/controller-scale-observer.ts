/**
 * bench/controller-scale: an observer of results and statuses on a thread of its own (its own event loop and its own
 * connections), so what it sees is not late because the bench's main thread is busy creating 10,000 executions and
 * parsing their Jobs. It watches the bench's namespace and notes, per `<execution>/<task index>`, when a
 * CrewTaskResult's ADDED event arrived and when the execution's status first showed that task Succeeded, with the
 * controller's own time of that decision (the task's `completionTime`, the reconcile's clock), all in epoch ms.
 * With `probeCache` (BENCH_SCALE_AUDIT), it also notes the resourceVersion of that status and, every 100 ms, how far
 * the apiserver's crewexecutions watch cache has got: a LIST with resourceVersion=0 (served from the cache, answered
 * with the cache's resourceVersion) of a namespace with nothing in it, so the answer is small; and the pods' watch
 * cache the same way, a resource of the same etcd and apiserver that is not a custom resource, for comparison.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { silentLogger } from "../core/logger.ts";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import { Kubeconfig } from "../kube/runtime/kubeconfig.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  LABEL_EXECUTION,
  LABEL_TASK_INDEX,
  PODS,
  resourcePath,
} from "../kube/resources.ts";
import { keyMetadata } from "./controller-support.ts";

/** Wall-clock ms with sub-ms precision, comparable across threads and processes of one machine. */
export const epochMs = () => performance.timeOrigin + performance.now();

export interface Observed {
  /** A result's ADDED event reached the observer. */
  resultSeen: Map<string, number>;
  /** The execution's status first showed the task Succeeded at the observer. */
  statusSeen: Map<string, number>;
  /** That status's `completionTime` of the task: when the controller's reconcile decided it (its clock). */
  decided: Map<string, number>;
  /** Relists of the observer's two informers (a watch that expired, 410 Gone). */
  relists: number;
  /** The resourceVersion of the status that first showed the task Succeeded (with probeCache). */
  statusRv: Map<string, number>;
  /** The watch cache's resourceVersion: [probe sent, answered (epoch ms), resourceVersion], in order (probeCache). */
  cacheRv: [number, number, number][];
  /** The pods' watch cache's resourceVersion, probed alongside (probeCache). */
  podsCacheRv: [number, number, number][];
}

/** A namespace no execution is in: the cache probe's LIST answers nothing but the cache's resourceVersion. */
const EMPTY_NAMESPACE = "kubecrew-bench-none";
const PROBE_EVERY_MS = 100;

interface ObserverData {
  role: "observer";
  kubeconfig: string;
  namespace: string;
  probeCache: boolean;
}

interface StatusView extends KubeObject {
  status?: { tasks?: { phase?: string; completionTime?: string }[] };
}

/** The observer's thread, seen from the bench: start() once, collect() as often as wanted, stop() at the end. */
export class LatencyObserver {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private replies: ((o: Observed) => void)[] = [];

  constructor(kubeconfig: string, namespace: string, probeCache = false) {
    const data: ObserverData = { role: "observer", kubeconfig, namespace, probeCache };
    this.worker = new Worker(new URL(import.meta.url), { workerData: data });
    this.ready = new Promise((resolve, reject) => {
      this.worker.once("error", reject);
      this.worker.on("message", (m: { type: string; observed?: Observed }) => {
        if (m.type === "synced") resolve();
        if (m.type === "observed") this.replies.shift()?.(m.observed!);
      });
    });
  }

  start(): Promise<void> {
    return this.ready;
  }

  collect(): Promise<Observed> {
    return new Promise((resolve) => {
      this.replies.push(resolve);
      this.worker.postMessage({ type: "collect" });
    });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

async function observe(o: ObserverData): Promise<void> {
  const client = new KubeClient(Kubeconfig.fromFile(o.kubeconfig));
  const resultSeen = new Map<string, number>();
  const statusSeen = new Map<string, number>();
  const decided = new Map<string, number>();
  const statusRv = new Map<string, number>();
  const cacheRv: [number, number, number][] = [];
  const podsCacheRv: [number, number, number][] = [];
  const results = new Informer<KubeObject>({
    client,
    path: resourcePath(CREW_TASK_RESULTS, o.namespace),
    labelSelector: LABEL_EXECUTION,
    log: silentLogger(),
    transform: (r) => ({
      metadata: keyMetadata(r, true),
    }),
  });
  results.on((event, r) => {
    if (event !== "add") return;
    const labels = r.metadata?.labels ?? {};
    const key = `${labels[LABEL_EXECUTION]}/${labels[LABEL_TASK_INDEX]}`;
    if (!resultSeen.has(key)) resultSeen.set(key, epochMs());
  });
  const executions = new Informer<StatusView>({
    client,
    path: resourcePath(CREW_EXECUTIONS, o.namespace),
    log: silentLogger(),
    transform: (raw) => {
      const e = raw as StatusView;
      return {
        metadata: keyMetadata(e),
        status: {
          tasks: (e.status?.tasks ?? []).map((t) => ({ phase: t.phase, completionTime: t.completionTime })),
        },
      };
    },
  });
  executions.on((event, e) => {
    if (event === "delete") return;
    const at = epochMs();
    e.status?.tasks?.forEach((t, i) => {
      const key = `${e.metadata!.name}/${i}`;
      if (t.phase !== "Succeeded" || statusSeen.has(key)) return;
      statusSeen.set(key, at);
      if (o.probeCache) statusRv.set(key, Number(e.metadata!.resourceVersion));
      if (t.completionTime) decided.set(key, Date.parse(t.completionTime));
    });
  });
  await Promise.all([results.start(), executions.start()]);
  if (o.probeCache) {
    void probeCache(client, resourcePath(CREW_EXECUTIONS, EMPTY_NAMESPACE), cacheRv);
    void probeCache(client, resourcePath(PODS, EMPTY_NAMESPACE), podsCacheRv);
  }
  parentPort!.on("message", (m: { type: string }) => {
    if (m.type !== "collect") return;
    const relists = results.relists + executions.relists - 2;
    const observed: Observed = { resultSeen, statusSeen, decided, relists, statusRv, cacheRv, podsCacheRv };
    parentPort!.postMessage({ type: "observed", observed });
  });
  parentPort!.postMessage({ type: "synced" });
}

/** Notes a watch cache's resourceVersion every PROBE_EVERY_MS (`path`: a LIST of it), for as long as the thread lives. */
async function probeCache(client: KubeClient, path: string, samples: [number, number, number][]): Promise<void> {
  for (;;) {
    const sent = epochMs();
    try {
      const list = await client.list(path, { resourceVersion: "0" });
      samples.push([sent, epochMs(), Number(list.metadata.resourceVersion)]);
    } catch {
      // a probe lost under load: the next one
    }
    await new Promise((r) => setTimeout(r, Math.max(0, sent + PROBE_EVERY_MS - epochMs())));
  }
}

if (!isMainThread && (workerData as ObserverData | undefined)?.role === "observer") {
  await observe(workerData as ObserverData);
}
