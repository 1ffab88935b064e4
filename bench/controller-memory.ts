/**
 * bench/controller-memory: the controller's memory with N finished executions and their children in its caches, in a
 * few minutes instead of the half hour bench:controller-scale takes to run 10,000. A plain client writes N 1-task
 * executions as the controller leaves them (the CrewExecution with its final status and crew snapshot, its Job — the
 * very object the controller builds, `taskJob`, with a Complete status — and its CrewTaskResult, the runner's object) to
 * the local control plane; the Jobs are managed by no controller of the cluster (`spec.managedBy`, and suspended), so no
 * pod runs. Then, for each variant of the controller's environment, the controller starts (compiled as the image runs it,
 * with the image's ENV: bench/as-image.ts), lists everything, reconciles every execution once, and takes a burst of
 * watch events (every object annotated once), then idles 30 s; its memory is printed after each step:
 *   RSS (anonymous; file pages, mostly the node binary; malloc's brk heap), V8's heap used/total and external memory.
 *
 *   npm run bench:controller-memory   [BENCH_MEMORY_COUNT=10000 BENCH_MEMORY_VARIANTS='image|MALLOC_ARENA_MAX=2|…']
 *
 * BENCH_MEMORY_VARIANTS: `|`-separated controller environments, each `NAME=value,NAME=value`; `image` is the image's ENV
 * as it is, `none` the image's ENV without any malloc setting (GLIBC_TUNABLES, MALLOC_*). Every other variant is `none`
 * plus its own settings (`image,NAME=value`: the image's ENV plus those); `cli=<path>` among them runs another compiled
 * kubecrew (e.g. an older commit's, for an A/B of the code on the same data).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CrewSpec } from "../core/crew.ts";
import { crewSpec as crewSpecSchema } from "../core/crew-resource.ts";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { CREW_EXECUTIONS, CREW_TASK_RESULTS, CREWS, JOBS, resourcePath } from "../kube/resources.ts";
import {
  applyCrew,
  createNamespace,
  crewYaml,
  RUNNER_SA,
  startControllerProcess,
  waitFor,
  type ControllerProcess,
} from "../test/e2e/support/fixture.ts";
import { compileAsImage, imageEnv } from "./as-image.ts";
import { cpuSeconds } from "./controller-scale-probe.ts";
import { benchCluster, deleteNamespace } from "./controller-support.ts";
import { finishedExecution, newExecution } from "./finished-execution.ts";

const count = Number(process.env.BENCH_MEMORY_COUNT ?? 10_000);
const variants = (process.env.BENCH_MEMORY_VARIANTS ?? "image").split("|").map((v) => v.trim());
const concurrency = 48;
const MALLOC_SETTINGS = /^(GLIBC_TUNABLES|MALLOC_\w+)$/;

/** The controller's environment of a variant (see the header). */
function variantEnv(variant: string): Record<string, string> {
  const entries = variant.split(",").filter(Boolean);
  const image = imageEnv();
  const env = entries.includes("image")
    ? image
    : Object.fromEntries(Object.entries(image).filter(([name]) => !MALLOC_SETTINGS.test(name)));
  for (const kv of entries.filter((e) => e.includes("=")))
    env[kv.slice(0, kv.indexOf("="))] = kv.slice(kv.indexOf("=") + 1);
  return env;
}

/** A process's memory from /proc: RSS, its anonymous and file-backed parts, and malloc's brk heap. */
function procMemory(pid: number): { rss: number; anon: number; file: number; brk: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  const smaps = readFileSync(`/proc/${pid}/smaps`, "utf8");
  const heap = smaps.split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/).find((m) => /\[heap\]/.test(m.split("\n")[0]!));
  const mb = (k: number) => k / 1024;
  return {
    rss: mb(kb(rollup, "Rss")),
    anon: mb(kb(rollup, "Anonymous")),
    file: mb(kb(rollup, "Rss") - kb(rollup, "Anonymous") - kb(rollup, "Shmem")),
    brk: mb(heap ? kb(heap, "Rss") : 0),
  };
}

/** The sum of a controller metric's samples (all label sets). */
async function controllerGauge(controller: ControllerProcess, name: string): Promise<number> {
  const text = await (await fetch(`${controller.url}/metrics`)).text();
  const full = `kubecrew_controller_${name}`;
  return text
    .split("\n")
    .filter((l) => l.startsWith(full + " ") || l.startsWith(full + "{"))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

async function memoryLine(controller: ControllerProcess): Promise<string> {
  const m = procMemory(controller.child.pid!);
  const used = (await controllerGauge(controller, "nodejs_heap_size_used_bytes")) / 2 ** 20;
  const total = (await controllerGauge(controller, "nodejs_heap_size_total_bytes")) / 2 ** 20;
  const external = (await controllerGauge(controller, "nodejs_external_memory_bytes")) / 2 ** 20;
  const f = (n: number) => n.toFixed(0);
  return (
    `RSS ${f(m.rss)} MB (anonymous ${f(m.anon)}, file ${f(m.file)}, malloc brk heap ${f(m.brk)}); ` +
    `V8 heap ${f(used)} used of ${f(total)} MB, external ${f(external)} MB`
  );
}

/** Until the controller's queue has been empty and idle for 3 s in a row. */
async function settled(controller: ControllerProcess): Promise<void> {
  let quietSince = 0;
  await waitFor(
    "the controller's queue settles",
    async () => {
      const busy =
        (await controllerGauge(controller, "queue_depth")) +
        (await controllerGauge(controller, "reconciles_in_flight"));
      if (busy > 0) quietSince = 0;
      else quietSince ||= Date.now();
      return quietSince > 0 && Date.now() - quietSince >= 3000;
    },
    600_000,
    250,
  );
}

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Writes one execution as the controller leaves it (finished-execution.ts); its Job is managed by no one. */
async function writeFinished(client: KubeClient, namespace: string, crew: CrewSpec, name: string): Promise<void> {
  const created = await client.create<KubeObject>(
    resourcePath(CREW_EXECUTIONS, namespace),
    newExecution("tasks-1", namespace, name),
  );
  // The children need the execution's uid (their owner reference, the assignment).
  const o = finishedExecution({
    crewName: "tasks-1",
    crew,
    namespace,
    name,
    uid: created.metadata!.uid!,
    startedMs: Date.now(),
    runnerServiceAccount: RUNNER_SA,
  });
  // No controller of the cluster runs it (and suspended, in case one would): no pod, the status is the bench's.
  o.job.spec = { ...(o.job.spec as object), managedBy: "kubecrew.io/bench", suspend: true };
  await client.create(resourcePath(JOBS, namespace), o.job);
  await client.mergePatch(resourcePath(JOBS, namespace, o.job.metadata!.name!, "status"), { status: o.jobStatus });
  await client.create(resourcePath(CREW_TASK_RESULTS, namespace), o.result);
  await client.mergePatch(resourcePath(CREW_EXECUTIONS, namespace, name, "status"), { status: o.executionStatus });
}

const cluster = benchCluster(["--kwok"]);
const client = new KubeClient(cluster.kubeConfig);
const cli = compileAsImage()(join(import.meta.dirname, "..", "cli", "main.ts"));
let namespace = "";
let controller: ControllerProcess | undefined;
// Stopped from outside (a time limit, Ctrl-C): no control plane or controller outlives the bench.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    controller?.child.kill("SIGKILL");
    cluster.stop();
    process.exit(130);
  });
}
try {
  namespace = await createNamespace(cluster.kubeconfig, "memory");
  await applyCrew(
    cluster.kubeconfig,
    namespace,
    crewYaml("tasks-1", "mock", { tasks: 1, taskTimeout: 3600, executionTimeout: 7200 }),
  );
  const crew = crewSpecSchema.parse((await client.get<KubeObject>(resourcePath(CREWS, namespace, "tasks-1"))).spec);
  const names = Array.from({ length: count }, (_, i) => `m-${i}`);
  const t0 = performance.now();
  await inParallel(names, (name) => writeFinished(client, namespace, crew, name));
  console.log(
    `controller memory: ${count} finished 1-task executions with their Jobs and results written to the local control` +
      ` plane in ${((performance.now() - t0) / 1000).toFixed(0)} s; variants: ${variants.join(" | ")}`,
  );

  for (const variant of variants) {
    const { cli: variantCli, ...env } = variantEnv(variant);
    const started = performance.now();
    controller = await startControllerProcess(cluster.kubeconfig, namespace, {
      identity: "memory",
      cli: variantCli ?? cli,
      env: { ...env, LOG_LEVEL: "warn", KUBECREW_LEADER_ELECT: "false", KUBECREW_RUNNER_IMAGE: "kubecrew:bench" },
    });
    const pid = controller.child.pid!;
    await settled(controller);
    const syncSeconds = (performance.now() - started) / 1000;
    const synced = await memoryLine(controller);
    const cpuSynced = cpuSeconds(pid);

    // The burst: every object changes once (an annotation), as fast as the apiserver takes it.
    const tb = performance.now();
    const touch = { metadata: { annotations: { "bench.kubecrew.io/touched": String(Date.now()) } } };
    const paths = names.flatMap((n) => [
      resourcePath(CREW_EXECUTIONS, namespace, n),
      resourcePath(JOBS, namespace, `${n}-0`),
      resourcePath(CREW_TASK_RESULTS, namespace, `${n}-0`),
    ]);
    await inParallel(paths, async (path) => {
      await client.mergePatch(path, touch);
    });
    const burstSeconds = (performance.now() - tb) / 1000;
    await settled(controller);
    const afterBurst = await memoryLine(controller);
    // Idle: V8's memory reducer collects and gives back what the burst left (it starts ~8 s after the last GC).
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const idle = await memoryLine(controller);
    const writes = await controllerGauge(controller, "apiserver_writes_total");
    console.log(`variant ${variant}  (env: ${JSON.stringify(env)})`);
    console.log(`  caches synced, every execution reconciled (${syncSeconds.toFixed(0)} s): ${synced}`);
    console.log(`  after a burst of ${paths.length} watch events (${burstSeconds.toFixed(0)} s): ${afterBurst}`);
    console.log(`  30 s later, idle: ${idle}`);
    console.log(
      `  controller CPU ${cpuSynced.toFixed(1)} s to sync, ${(cpuSeconds(pid) - cpuSynced).toFixed(1)} s for the burst;` +
        ` its writes ${writes}`,
    );
    await controller.kill("SIGTERM");
    controller = undefined;
  }
} finally {
  await controller?.kill("SIGTERM");
  if (namespace) await deleteNamespace(cluster.kubeconfig, namespace);
  client.close();
  cluster.stop();
}
