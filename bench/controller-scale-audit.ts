/**
 * bench/controller-scale with BENCH_SCALE_AUDIT: the apiserver's side of each task's status write, from kube-apiserver's
 * audit log (hack/local-cluster.sh's KUBECREW_CLUSTER_AUDIT: the CrewExecution status writes with their bodies, at
 * ResponseComplete). Per task, the first write the apiserver accepted whose body marks the task Succeeded: when the
 * apiserver received it (`requestReceivedTimestamp`) and answered it (`stageTimestamp`: after the write was committed).
 * Joined with the observer's times, a task's result → status time splits into the controller's side (result created →
 * decision → write received), the apiserver's write (received → answered) and the watch's delivery (answered → the
 * observer's event). The last splits at the apiserver's watch cache: the observer polls the cache's resourceVersion
 * (controller-scale-observer.ts), and the first poll answered with the status's resourceVersion or later is when the
 * cache had it at the latest — answered → in the watch cache (etcd's watch, the cache taking it in; an upper bound)
 * and watch cache → the observer (the cache's dispatch to its watchers, their connections; a lower bound).
 * All wall clock of one machine: the audit's RFC 3339 times with microseconds, the controller's completionTime (ms),
 * the bench's epochMs().
 *
 * BENCH_SCALE_AUDIT=1: the log in a temporary file, removed at the end; BENCH_SCALE_AUDIT=<file>: the log kept there,
 * and each task's times appended to <file>.tasks.jsonl (for a closer look at a tail).
 */
import { appendFileSync, createReadStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { of, parts as latencyParts, quarterLines, quarters, sub, type TaskTimes } from "./controller-scale-latency.ts";
import { epochMs, type Observed } from "./controller-scale-observer.ts";
import { percentile } from "./controller-support.ts";

/** One accepted status write of a task's success, in epoch ms. */
export interface StatusWrite {
  received: number;
  answered: number;
}

export interface AuditedWrites {
  /** Per `<execution>/<task index>`: the first accepted status write whose body has that task Succeeded. */
  committed: Map<string, StatusWrite>;
  /** Status writes carrying a task's success that the apiserver refused, by HTTP code (409: a stale resourceVersion). */
  refused: Map<number, number>;
  /** All status writes of the namespace in the log. */
  writes: number;
}

/** An RFC 3339 time with up to nanoseconds (`2026-11-26T11:04:00.172142Z`) as epoch ms, keeping the fraction. */
export function microTime(text: string): number {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(text);
  if (!m) return NaN;
  return Date.parse(`${m[1]}${m[3]}`) + Number(`0.${m[2] ?? "0"}`) * 1000;
}

interface AuditEvent {
  verb?: string;
  stage?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestObject?: { status?: { tasks?: { phase?: string }[] } };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** Reads the audit log's CrewExecution status writes in `namespace` (one JSON event a line). */
export async function readStatusWrites(path: string, namespace: string): Promise<AuditedWrites> {
  const committed = new Map<string, StatusWrite>();
  const refused = new Map<number, number>();
  let writes = 0;
  for await (const line of createInterface({ input: createReadStream(path) })) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditEvent;
    const ref = e.objectRef ?? {};
    if (e.stage !== "ResponseComplete" || ref.resource !== "crewexecutions" || ref.subresource !== "status") continue;
    if (ref.namespace !== namespace || (e.verb !== "patch" && e.verb !== "update")) continue;
    writes++;
    const code = e.responseStatus?.code ?? 0;
    const write = {
      received: microTime(e.requestReceivedTimestamp ?? ""),
      answered: microTime(e.stageTimestamp ?? ""),
    };
    (e.requestObject?.status?.tasks ?? []).forEach((t, i) => {
      if (t.phase !== "Succeeded") return;
      if (code < 200 || code > 299) {
        refused.set(code, (refused.get(code) ?? 0) + 1);
        return;
      }
      const key = `${ref.name}/${i}`;
      const known = committed.get(key);
      if (!known || write.received < known.received) committed.set(key, write);
    });
  }
  return { committed, refused, writes };
}

/** A task's times with its status write's (undefined where the log has none). */
export interface AuditedTask extends TaskTimes {
  received?: number;
  answered?: number;
  /** The first cache probe answered with the status's resourceVersion or later (epoch ms). */
  cached?: number;
}

/** The answer time of the first probe that saw `rv` in the watch cache (samples in order; binary search). */
export function cachedAt(samples: [number, number, number][], rv: number | undefined): number | undefined {
  if (rv === undefined) return undefined;
  let lo = 0;
  let hi = samples.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (samples[mid]![2] >= rv) hi = mid;
    else lo = mid + 1;
  }
  return samples[lo]?.[1];
}

/** The parts of one task's time, each in ms. */
const parts = {
  committed: (t: AuditedTask) => sub(t.answered, t.created),
  observer: latencyParts.observer,
  toDecision: latencyParts.toDecision,
  decisionToReceived: (t: AuditedTask) => sub(t.received, t.decided),
  receivedToAnswered: (t: AuditedTask) => sub(t.answered, t.received),
  answeredToObserver: (t: AuditedTask) => sub(t.statusSeen, t.answered),
  answeredToCache: (t: AuditedTask) => sub(t.cached, t.answered),
  cacheToObserver: (t: AuditedTask) => sub(t.statusSeen, t.cached),
};

/** How many tasks have a part below zero, and by how much at most (two clocks out of step, or an order not assumed). */
function negatives(tasks: AuditedTask[], part: (t: AuditedTask) => number | undefined): string {
  const below = tasks.flatMap((t) => {
    const v = part(t);
    return v !== undefined && v < 0 ? [-v] : [];
  });
  return below.length === 0 ? "none" : `${below.length} (by up to ${Math.max(...below).toFixed(1)} ms)`;
}

/** The lines a run prints with the audit log, parts by quarter as latencyLines() prints the observer's. */
/**
 * How far the crewexecutions watch cache was behind the pods' at each pods probe: the time until the crewexecutions
 * cache reached the resourceVersion the pods' cache had then (0: it had it already). Both follow one etcd's revisions.
 */
function behindPods(observed: Pick<Observed, "cacheRv" | "podsCacheRv">): { at: number; ms: number }[] {
  return observed.podsCacheRv.flatMap(([, answered, rv]) => {
    const reached = cachedAt(observed.cacheRv, rv);
    return reached === undefined ? [] : [{ at: answered, ms: Math.max(0, reached - answered) }];
  });
}

export function auditLines(
  tasks: AuditedTask[],
  audited: AuditedWrites,
  observed: Pick<Observed, "cacheRv" | "podsCacheRv">,
  t0: number,
): string[] {
  const probes = observed.cacheRv;
  const behind = behindPods(observed);
  const joined = tasks.filter((t) => t.answered !== undefined);
  const refused = [...audited.refused].map(([code, n]) => `${code} ×${n}`).join(", ") || "none";
  const lines = [
    `result → status committed (the apiserver's answer to the status write, its audit log) ${of(tasks, parts.committed)} ms;` +
      ` at a watcher (the observer) ${of(tasks, parts.observer)} ms`,
    `  parts: created → decision ${of(tasks, parts.toDecision)}; decision → write received ${of(tasks, parts.decisionToReceived)};` +
      ` received → answered (the write) ${of(tasks, parts.receivedToAnswered)};` +
      ` answered → the observer's watch event ${of(tasks, parts.answeredToObserver)}` +
      ` (answered → in the watch cache ≤ ${of(tasks, parts.answeredToCache)}; → the observer ≥ ${of(tasks, parts.cacheToObserver)})`,
    `  the watch cache probed ${probes.length} times: each answered in ${of(probes, ([sent, answered]) => answered - sent)} ms,` +
      ` one every ${of(
        probes.slice(1).map((p, i) => p[0] - probes[i]![0]),
        (gap) => gap,
      )} ms`,
    `  the crewexecutions watch cache behind the pods' (the time until it had what the pods' cache had),` +
      ` by quarter of the run: ${quarters(behind, (b) => b.at)
        .map((q) => (q.length ? `${((q[0]!.at - t0) / 1000).toFixed(0)} s ${of(q, (b) => b.ms)}` : "-"))
        .join("; ")} ms`,
    `  ${joined.length} of ${tasks.length} tasks found in the log (${audited.writes} status writes);` +
      ` writes of a task's success refused: ${refused}`,
    `  clocks: write received before the decision in ${negatives(tasks, parts.decisionToReceived)};` +
      ` the observer's event before the answer in ${negatives(tasks, parts.answeredToObserver)};` +
      ` the bench's epochMs() − Date.now() ${(epochMs() - Date.now()).toFixed(1)} ms`,
  ];
  lines.push(
    ...quarterLines(
      tasks,
      t0,
      (q) =>
        `committed ${of(q, parts.committed)}; observer ${of(q, parts.observer)}; → decision ${of(q, parts.toDecision)};` +
        ` → received ${of(q, parts.decisionToReceived)}; → answered ${of(q, parts.receivedToAnswered)};` +
        ` → observer ${of(q, parts.answeredToObserver)} (→ cache ≤ ${of(q, parts.answeredToCache)},` +
        ` → observer ≥ ${of(q, parts.cacheToObserver)})`,
    ),
  );
  return lines;
}

/**
 * The audit log of a bench run, as BENCH_SCALE_AUDIT asks: the cluster's environment that turns it on, the lines of
 * each run, and the summary beside the headline's p99. Undefined when not asked, or on a cluster the bench did not
 * start (BENCH_KUBECONFIG, kind: their apiserver's flags are not the bench's).
 */
export function statusWriteAudit(given = process.env.BENCH_SCALE_AUDIT): StatusWriteAudit | undefined {
  if (!given || given === "0") return undefined;
  if (process.env.BENCH_KUBECONFIG || process.env.BENCH_KIND === "1" || process.argv.includes("--kind")) {
    console.log("BENCH_SCALE_AUDIT: only on the local control plane the bench starts; no audit log");
    return undefined;
  }
  return new StatusWriteAudit(given === "1" ? undefined : given);
}

export class StatusWriteAudit {
  readonly path: string;
  private readonly temporary?: string;
  private readonly committedMs: number[] = [];

  constructor(keep?: string) {
    if (keep) this.path = keep;
    else {
      this.temporary = mkdtempSync(join(tmpdir(), "kubecrew-bench-audit-"));
      this.path = join(this.temporary, "audit.log");
    }
  }

  /** What hack/local-cluster.sh up is given. */
  get clusterEnv(): Record<string, string> {
    return { KUBECREW_CLUSTER_AUDIT: this.path };
  }

  /** One run's lines: its tasks joined with their status writes. */
  async lines(tasks: TaskTimes[], observed: Observed, namespace: string, t0: number): Promise<string[]> {
    const audited = await readStatusWrites(this.path, namespace);
    const joined: AuditedTask[] = tasks.map((t) => ({
      ...t,
      ...audited.committed.get(t.key),
      cached: cachedAt(observed.cacheRv, observed.statusRv.get(t.key)),
    }));
    for (const t of joined) {
      const v = parts.committed(t);
      if (v !== undefined) this.committedMs.push(v);
    }
    if (!this.temporary)
      appendFileSync(`${this.path}.tasks.jsonl`, joined.map((t) => JSON.stringify(t) + "\n").join(""));
    return auditLines(joined, audited, observed, t0);
  }

  /** p99 to the status committed over all runs, beside p99 to a watcher seeing it (the headline's). */
  summary(watcherP99: number): string {
    return (
      `result → status p99 over all runs: committed (audit log) ${percentile(this.committedMs, 99).toFixed(0)} ms;` +
      ` seen by the bench ${watcherP99.toFixed(0)} ms`
    );
  }

  close(): void {
    if (this.temporary) rmSync(this.temporary, { recursive: true, force: true });
  }
}
