/**
 * Shared by the controller benchmarks: a cluster (BENCH_KUBECONFIG, or a private local control plane and node that
 * hack/local-cluster.sh starts and stops), a namespace with the runner's account, the controller in this process
 * (so its apiserver writes can be counted), and a watch that timestamps what the bench sees.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { silentLogger } from "../core/logger.ts";
import { controllerConfigFromEnv } from "../controller/config.ts";
import { startController, type RunningController } from "../controller/controller.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { KubeClient } from "../kube/runtime/client.ts";
import { type KubeObject, type WriteVerb } from "../kube/runtime/client.ts";
import { resourceOfPath } from "../kube/runtime/metrics.ts";
import { createNamespace, crewYaml, applyCrew, deleteNamespace, RUNNER_SA } from "../test/e2e/support/fixture.ts";
import { trace } from "@opentelemetry/api";
import { ANNOTATION_TRACEPARENT } from "../kube/resources.ts";
import { traceparentOf } from "../platform/telemetry/trace-context.ts";
import { startTracing, TRACER_NAME } from "../platform/telemetry/tracing.ts";

const repo = join(import.meta.dirname, "..");

export interface BenchCluster {
  kubeconfig: string;
  kubeConfig: KubeConfig;
  stop(): void;
}

/** `--kind` (or BENCH_KIND=1): a kind cluster with real pods (hack/kind-e2e.sh up), task pods on the image it built. */
export const onKind = process.argv.includes("--kind") || process.env.BENCH_KIND === "1";
/** The image the task pods run: on kind the one hack/kind-e2e.sh built and loaded; the local node ignores it. */
export const runnerImage = onKind ? (process.env.IMAGE ?? "kubecrew:e2e") : "kubecrew:bench";

function applyCrds(kubeconfig: string): void {
  const kubectl = join(
    execFileSync("bash", [join(repo, "hack/tools.sh"), "path"], { encoding: "utf8" }).trim(),
    "kubectl",
  );
  const crds = readdirSync(join(repo, "crds")).flatMap((f) => ["-f", join(repo, "crds", f)]);
  execFileSync(kubectl, ["--kubeconfig", kubeconfig, "apply", "--server-side", ...crds], { stdio: "ignore" });
  execFileSync(kubectl, ["--kubeconfig", kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", ...crds], {
    stdio: "ignore",
  });
}

/**
 * `upArgs`: what hack/local-cluster.sh up is given (`--kwok`: KWOK's fake node instead of the local node); `clusterEnv`:
 * its settings (e.g. KUBECREW_CLUSTER_AUDIT), for the local control plane only.
 */
export function benchCluster(upArgs: string[] = [], clusterEnv: Record<string, string> = {}): BenchCluster {
  const given = process.env.BENCH_KUBECONFIG;
  const load = (path: string) => {
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    return kc;
  };
  if (given) return { kubeconfig: given, kubeConfig: load(given), stop: () => undefined };
  if (onKind) {
    const kindE2e = (arg: string) =>
      execFileSync("bash", [join(repo, "hack/kind-e2e.sh"), arg], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      });
    const kubeconfig = kindE2e("up").trim().split("\n").at(-1)!;
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      kindE2e("down");
      rmSync(dirname(kubeconfig), { recursive: true, force: true });
    };
    // Also when the bench fails: no kind cluster outlives it.
    process.once("exit", stop);
    applyCrds(kubeconfig);
    return { kubeconfig, kubeConfig: load(kubeconfig), stop };
  }
  const stateDir = mkdtempSync(join(tmpdir(), "kubecrew-bench-"));
  const env = { ...process.env, ...clusterEnv, KUBECREW_CLUSTER_DIR: stateDir };
  const cluster = (...args: string[]) =>
    execFileSync("bash", [join(repo, "hack/local-cluster.sh"), ...args], { env, stdio: ["ignore", "pipe", "inherit"] });
  cluster("up", ...upArgs);
  const kubeconfig = join(stateDir, "admin.kubeconfig");
  applyCrds(kubeconfig);
  return {
    kubeconfig,
    kubeConfig: load(kubeconfig),
    stop: () => {
      cluster("down");
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export interface WriteCounts {
  byResource: Map<string, number>;
  total(filter?: (resource: string) => boolean): number;
  reset(): void;
}

export function writeCounter(): WriteCounts & { onWrite: (verb: WriteVerb, path: string) => void } {
  const byResource = new Map<string, number>();
  return {
    byResource,
    onWrite: (verb, path) => {
      const key = `${verb} ${resourceOfPath(path)}`;
      byResource.set(key, (byResource.get(key) ?? 0) + 1);
    },
    total: (filter = () => true) => [...byResource].filter(([k]) => filter(k)).reduce((n, [, v]) => n + v, 0),
    reset: () => byResource.clear(),
  };
}

export async function benchNamespace(
  cluster: BenchCluster,
  crews: Record<string, { model: string; tasks: number }>,
): Promise<string> {
  const namespace = await createNamespace(cluster.kubeconfig, "bench");
  for (const [name, c] of Object.entries(crews))
    await applyCrew(cluster.kubeconfig, namespace, crewYaml(name, c.model, { tasks: c.tasks }));
  return namespace;
}

export async function startBenchController(
  cluster: BenchCluster,
  namespace: string,
  onWrite: (verb: WriteVerb, path: string) => void,
): Promise<RunningController> {
  const config = controllerConfigFromEnv({
    KUBECREW_NAMESPACE: namespace,
    KUBECREW_HEALTH_PORT: "0",
    KUBECREW_HEALTH_HOST: "127.0.0.1",
    KUBECREW_LEADER_ELECT: "false",
    KUBECREW_RUNNER_SERVICE_ACCOUNT: RUNNER_SA,
    KUBECREW_CONTROLLER_WORKERS: process.env.BENCH_WORKERS ?? "8",
    KUBECREW_RUNNER_IMAGE: runnerImage,
    ...(onKind ? { KUBECREW_RUNNER_IMAGE_PULL_POLICY: "Never" } : {}),
    // bench/tracing.ts: the controller traces as `kubecrew controller` does, and hands the endpoint to task pods.
    ...(process.env.OTEL_EXPORTER_OTLP_ENDPOINT
      ? { OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT }
      : {}),
  });
  const tracing = startTracing({ env: process.env, serviceName: "kubecrew-controller" });
  const controller = await startController(config, { log: silentLogger(), kubeConfig: cluster.kubeConfig, onWrite });
  await controller.ready();
  return {
    url: controller.url,
    metrics: controller.metrics,
    isLeader: () => controller.isLeader(),
    ready: () => controller.ready(),
    stop: async () => {
      await controller.stop();
      await tracing.stop();
    },
  };
}

export { deleteNamespace };

/**
 * CrewExecutions created straight through the API server (what the crew API does on kickoff); with tracing on, each
 * with the traceparent of a kickoff span, as the API writes it.
 */
export async function createExecutions(
  client: KubeClient,
  namespace: string,
  crew: string,
  count: number,
  prefix: string,
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  await Promise.all(
    names.map((name) =>
      client.create(`/apis/kubecrew.io/v1alpha1/namespaces/${namespace}/crewexecutions`, {
        apiVersion: "kubecrew.io/v1alpha1",
        kind: "CrewExecution",
        metadata: { name, namespace, ...kickoffAnnotations(crew) },
        spec: { crewRef: { name: crew }, inputs: { topic: "bench" } },
      }),
    ),
  );
  return names;
}

/** The annotation the API writes on a traced kickoff; none with tracing off. */
function kickoffAnnotations(crew: string): { annotations?: Record<string, string> } {
  const span = trace.getTracer(TRACER_NAME).startSpan(`kickoff ${crew}`);
  const traceparent = traceparentOf(span);
  span.end();
  return traceparent ? { annotations: { [ANNOTATION_TRACEPARENT]: traceparent } } : {};
}

/** An informer of the bench's own, calling `seen` with the local time of every event. */
export async function watchWithTimes<T extends KubeObject>(
  client: KubeClient,
  path: string,
  seen: (object: T, atMs: number) => void,
): Promise<Informer<T>> {
  const informer = new Informer<T>({ client, path, log: silentLogger() });
  informer.on((event, object) => {
    if (event !== "delete") seen(object, performance.now());
  });
  await informer.start();
  return informer;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** What a bench's informer keeps of an object's metadata: its key and resourceVersion (and its labels when asked). */
export function keyMetadata(o: KubeObject, withLabels = false): KubeObject["metadata"] {
  const { name, namespace, resourceVersion, labels } = o.metadata ?? {};
  return withLabels ? { name, namespace, resourceVersion, labels } : { name, namespace, resourceVersion };
}

export const ms = (n: number) => `${n.toFixed(1)} ms`;
