/**
 * bench/controller-scale: where a phase of the bench spent the machine. Snapshots before and after a phase, and their
 * difference per execution:
 *   - CPU of each process: the control plane's (pid files next to the local cluster's kubeconfig), the controller's
 *     and the bench's own;
 *   - the apiserver's own counts (its /metrics): writes by verb and resource, 409 answers, watch events sent by kind
 *     (count and bytes), and the server-side latency of the execution status patch;
 *   - the controller's (its /metrics): reconciles, Events dropped, queue wait by lane, its request latencies, event
 *     loop delay.
 */
import { readFileSync } from "node:fs";
import https from "node:https";
import { dirname, join } from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";

/** utime + stime of a process, in seconds (/proc/<pid>/stat, clock ticks of 1/100 s). */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

export function rssMb(pid: number | undefined): number {
  if (!pid) return NaN;
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : NaN;
}

/** The control plane's own processes (their pid files are next to the local cluster's kubeconfig). */
export function controlPlanePid(kubeconfig: string, name: string): number | undefined {
  try {
    return Number(readFileSync(join(dirname(kubeconfig), "run", `${name}.pid`), "utf8").trim());
  } catch {
    return undefined;
  }
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format, samples only (`name{a="b",…} value`). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const brace = line.indexOf("{");
    const space = line.lastIndexOf(" ");
    const name = brace >= 0 && brace < space ? line.slice(0, brace) : line.slice(0, line.indexOf(" "));
    const labels: Record<string, string> = {};
    if (brace >= 0 && brace < space) {
      const body = line.slice(brace + 1, line.lastIndexOf("}"));
      for (const m of body.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    }
    const value = Number(line.slice(space + 1));
    if (Number.isFinite(value)) samples.push({ name, labels, value });
  }
  return samples;
}

type Labels = Record<string, string>;

/** Sums of `name`'s samples in `after` minus those in `before`, grouped by `key` of their labels. */
export function deltaBy(
  before: Sample[],
  after: Sample[],
  name: string,
  key: (l: Labels) => string = () => "",
  where: (l: Labels) => boolean = () => true,
): Map<string, number> {
  const sum = (samples: Sample[]) => {
    const m = new Map<string, number>();
    for (const s of samples) {
      if (s.name !== name || !where(s.labels)) continue;
      const k = key(s.labels);
      m.set(k, (m.get(k) ?? 0) + s.value);
    }
    return m;
  };
  const a = sum(after);
  const b = sum(before);
  const d = new Map<string, number>();
  for (const [k, v] of a) {
    const delta = v - (b.get(k) ?? 0);
    if (delta > 0) d.set(k, delta);
  }
  return d;
}

const total = (m: Map<string, number>) => [...m.values()].reduce((s, n) => s + n, 0);

/** The upper bound of the histogram bucket holding quantile q of what was observed between two snapshots. */
export function histogramQuantile(
  before: Sample[],
  after: Sample[],
  name: string,
  q: number,
  where: (l: Labels) => boolean = () => true,
): number {
  const buckets = [...deltaBy(before, after, `${name}_bucket`, (l) => l.le ?? "", where)]
    .map(([le, n]) => [le === "+Inf" ? Infinity : Number(le), n] as const)
    .sort((x, y) => x[0] - y[0]);
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  return buckets.find(([, n]) => n >= q * total)?.[0] ?? Infinity;
}

async function fetchText(kubeConfig: KubeConfig, path: string): Promise<string> {
  const opts: https.RequestOptions = { headers: {} };
  await kubeConfig.applyToHTTPSOptions(opts);
  const url = new URL(kubeConfig.getCurrentCluster()!.server.replace(/\/$/, "") + path);
  return new Promise((resolve, reject) => {
    https
      .get(url, opts, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

export interface Snapshot {
  cpu: Record<string, number>;
  apiserver: Sample[];
  controller: Sample[];
}

const CONTROL_PLANE = ["kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok"] as const;
const SHORT: Record<string, string> = {
  "kube-apiserver": "apiserver",
  "kube-controller-manager": "kcm",
  "kube-scheduler": "scheduler",
};

/** Takes snapshots of one bench run's processes and metrics, and prints what a phase cost per execution. */
export class Probe {
  private readonly pids: Record<string, number | undefined>;
  private readonly o: { kubeconfig: string; kubeConfig: KubeConfig; controllerPid?: number; controllerUrl: string };

  constructor(o: { kubeconfig: string; kubeConfig: KubeConfig; controllerPid?: number; controllerUrl: string }) {
    this.o = o;
    this.pids = Object.fromEntries(CONTROL_PLANE.map((n) => [SHORT[n] ?? n, controlPlanePid(o.kubeconfig, n)]));
    this.pids.controller = o.controllerPid;
  }

  async snapshot(): Promise<Snapshot> {
    const [apiserver, controller] = await Promise.all([
      fetchText(this.o.kubeConfig, "/metrics").then(parseMetrics, () => []),
      fetch(`${this.o.controllerUrl}/metrics`).then(
        async (r) => parseMetrics(await r.text()),
        () => [],
      ),
    ]);
    const cpu = Object.fromEntries(Object.entries(this.pids).map(([n, pid]) => [n, cpuSeconds(pid)]));
    const own = process.cpuUsage();
    cpu.bench = (own.user + own.system) / 1e6;
    return { cpu, apiserver, controller };
  }

  /** CPU ms per execution by process, and in all. */
  cpuLine(before: Snapshot, after: Snapshot, executions: number): string {
    const parts = Object.keys(after.cpu).map((n) => [n, ((after.cpu[n]! - before.cpu[n]!) / executions) * 1000]);
    const all = parts.reduce((s, [, v]) => s + (Number.isFinite(v) ? (v as number) : 0), 0);
    return `${parts.map(([n, v]) => `${n} ${(v as number).toFixed(1)}`).join(", ")} (all ${all.toFixed(1)})`;
  }

  /** The apiserver's side of a phase: writes by verb and resource, 409s, reads, watch events by kind. */
  apiserverLines(before: Snapshot, after: Snapshot, executions: number): string[] {
    const per = (n: number) => (n / executions).toFixed(2);
    const d = (name: string, key?: (l: Labels) => string, where?: (l: Labels) => boolean) =>
      deltaBy(before.apiserver, after.apiserver, name, key, where);
    const resource = (l: Labels) => `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ""}`;
    const isRead = (l: Labels) => ["GET", "LIST", "WATCH", "CONNECT", "WATCHLIST"].includes(l.verb ?? "");
    const writes = [...d("apiserver_request_total", resource, (l) => !isRead(l))].sort((a, b) => b[1] - a[1]);
    const conflicts = d("apiserver_request_total", resource, (l) => l.code === "409");
    const reads = d("apiserver_request_total", undefined, (l) => l.verb === "GET" || l.verb === "LIST");
    const kind = (l: Labels) => l.kind ?? l.resource ?? "?";
    // Kinds of fewer than one event per 100 executions (the cluster's own objects) are left out.
    const events = [...d("apiserver_watch_events_total", kind)]
      .filter(([, n]) => n >= executions / 100)
      .sort((a, b) => b[1] - a[1]);
    const bytes = d("apiserver_watch_events_sizes_sum", kind);
    // Watches the apiserver cut because their reader fell behind (client-go relists or rewatches after each), and the
    // LISTs by resource (an informer's relist is one).
    const terminated = [...d("apiserver_terminated_watchers_total", (l) => l.resource ?? "?")];
    const lists = [
      ...d(
        "apiserver_request_total",
        (l) => `${l.resource} (${l.scope})`,
        (l) => l.verb === "LIST",
      ),
    ];
    return [
      `writes ${per(total(new Map(writes)))}/execution: ${writes.map(([k, n]) => `${k} ${per(n)}`).join(", ")}; ` +
        `GET/LIST ${per(total(reads))}; 409 ${per(total(conflicts))}` +
        (conflicts.size ? ` (${[...conflicts].map(([k, n]) => `${k} ${n}`).join(", ")})` : ""),
      `watch events sent ${per(total(new Map(events)))}/execution: ` +
        events
          .map(([k, n]) => `${k} ${per(n)} (${((bytes.get(k) ?? 0) / executions / 1024).toFixed(1)} KB)`)
          .join(", "),
      `watchers cut as unresponsive: ${terminated.map(([k, n]) => `${k} ${n}`).join(", ") || "none"}; ` +
        `LISTs: ${lists.map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`,
    ];
  }

  /** The execution status patch inside the apiserver (its own request latency histogram). */
  statusPatchLine(before: Snapshot, after: Snapshot): string {
    const where = (l: Labels) => l.verb === "PATCH" && l.resource === "crewexecutions" && l.subresource === "status";
    const q = (p: number) =>
      histogramQuantile(before.apiserver, after.apiserver, "apiserver_request_duration_seconds", p, where);
    return `status patch in the apiserver p50 ≤ ${fmt(q(0.5))}, p99 ≤ ${fmt(q(0.99))}`;
  }

  /** The controller's side: reconciles, Events dropped, queue wait, request latencies, event loop delay. */
  controllerLines(before: Snapshot, after: Snapshot, executions: number): string[] {
    const reconciles = deltaBy(
      before.controller,
      after.controller,
      "kubecrew_controller_reconciles_total",
      (l) => l.result ?? "",
    );
    const dropped = total(deltaBy(before.controller, after.controller, "kubecrew_controller_events_dropped_total"));
    const h = (name: string, where: (l: Labels) => boolean) =>
      `p50 ≤ ${fmt(histogramQuantile(before.controller, after.controller, name, 0.5, where))}, p99 ≤ ${fmt(histogramQuantile(before.controller, after.controller, name, 0.99, where))}`;
    const req = (method: string, resource: string) =>
      h(
        "kubecrew_controller_apiserver_request_duration_seconds",
        (l) => l.method === method && l.resource === resource,
      );
    const lag = after.controller.find((s) => s.name === "kubecrew_controller_nodejs_eventloop_lag_p99_seconds")?.value;
    return [
      `reconciles per execution ${[...reconciles].map(([k, n]) => `${k} ${(n / executions).toFixed(2)}`).join(", ")}; ` +
        `Events dropped ${dropped}`,
      `queue wait urgent ${h("kubecrew_controller_queue_wait_seconds", (l) => l.lane === "urgent")}; ` +
        `normal ${h("kubecrew_controller_queue_wait_seconds", (l) => l.lane === "normal")}`,
      `its requests: status PATCH ${req("PATCH", "crewexecutions/status")}; Job POST ${req("POST", "jobs")}; ` +
        `ConfigMap POST ${req("POST", "configmaps")}; event loop delay p99 ${lag === undefined ? "?" : fmt(lag)}`,
    ];
  }
}

function fmt(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(1)} s`;
}
