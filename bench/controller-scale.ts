/**
 * bench/controller-scale: how many executions a minute one controller replica carries, against the apiserver's own
 * rate for the same writes. The local control plane runs with KWOK instead of a node (hack/local-cluster.sh up --kwok):
 * kube-scheduler binds the task pods to a fake node, KWOK's stages move them to Running and then Succeeded, and a
 * stand-in for the runner (controller-scale-runner.ts) creates each task's CrewTaskResult once its pod runs — so the
 * figure is the controller plus the apiserver, nothing of a real pod's start. The controller runs as its own process
 * (`kubecrew controller`, compiled to JavaScript with the image's environment: bench/as-image.ts; its heap limited as
 * in the chart's pod), so its RSS and CPU are its own.
 *
 * For each crew size (1 and 3 tasks) and count (1,000 and 10,000), all executions kicked off at once:
 *   - executions/min of the controller, from the first create to the last execution Succeeded;
 *   - the baseline of the same run (controller-scale-baseline.ts): a plain client making the same writes for the same
 *     number of executions at full concurrency, as executions/min; and the ratio controller / baseline. The baseline's
 *     Jobs get pods too; it is also timed until the cluster ran those (the Job controller, scheduler and KWOK writing
 *     for each pod), which the controller's run cannot leave for later — the second ratio;
 *   - the controller's CPU seconds per execution, its RSS with everything created so far in its caches;
 *   - p99 from a CrewTaskResult's creation (the apiserver's answer to the stand-in) to the bench seeing the execution's
 *     status record that task's success;
 *   - last line: `executions/min <n>; ratio <r>; rss_mb <m>; status_p99_ms <p>` (the 1-task crew at the largest
 *     count, its ratio against the writes alone; RSS at the end, with every execution in the caches; p99 over all runs).
 * Wall time: 1,000 1-task executions took 10 min here (2 shared cores, loaded); the default counts take hours.
 * And where each phase spent the machine, per execution (controller-scale-probe.ts): CPU by process, the apiserver's
 * writes by resource, 409s and watch events sent by kind, the status patch's latency inside the apiserver; the
 * controller's (the first replica's) reconciles, queue waits, request latencies and event loop delay.
 * Where the result → status time goes: an observer on a thread of its own (controller-scale-observer.ts) notes when
 * each result and each task's success reach it, and the controller's time of the decision; the bench prints the
 * parts and quarters of kickoff order and of time (controller-scale-latency.ts).
 * BENCH_SCALE_AUDIT=1 (or =<file>, kept): the apiserver's audit log of the execution status writes, and the result →
 * status time split at that write (controller-scale-audit.ts): the controller's side (result → decision → write
 * received), the apiserver's write (received → answered: committed) and the watch's delivery (answered → the
 * observer's event), by quarter, and p99 to the status committed beside p99 to a watcher seeing it.
 * BENCH_SCALE_BASELINES=0: the controller's runs only, for diagnostics (the baselines' lines and the ratio are NaN).
 * BENCH_SCALE_PACE=<n>: kickoffs spread at n a minute (the latency below saturation); BENCH_CONTROLLER_ENV=A=1,B=2:
 * more controller settings (A/B runs); BENCH_SCALE_PROBE=0: no breakdown.
 * BENCH_SCALE_SHARDS=1,2,3: a row per shard count, each run with that many controller replicas sharing the
 * executions (controller-scale-shards.ts); CPU, writes and RSS are then the replicas' together.
 *   npm run bench:controller-scale   [BENCH_SCALE_COUNTS=1000,10000 BENCH_SCALE_TASKS=1,3 BENCH_WORKERS=… BENCH_SCALE_SHARDS=1,2,3]
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { crewSpec as crewSpecSchema } from "../core/crew-resource.ts";
import { KubeClient, type KubeObject } from "../kube/runtime/client.ts";
import { CREW_EXECUTIONS, CREWS, resourcePath } from "../kube/resources.ts";
import {
  applyCrew,
  createNamespace,
  crewYaml,
  RUNNER_SA,
  waitFor,
  type ControllerProcess,
} from "../test/e2e/support/fixture.ts";
import { compileAsImage, imageEnv } from "./as-image.ts";
import { statusWriteAudit } from "./controller-scale-audit.ts";
import { baselineWrites } from "./controller-scale-baseline.ts";
import { latencyLines, type TaskTimes } from "./controller-scale-latency.ts";
import { epochMs, LatencyObserver } from "./controller-scale-observer.ts";
import { controlPlanePid, cpuSeconds, Probe, rssMb } from "./controller-scale-probe.ts";
import { RunnerStandIn } from "./controller-scale-runner.ts";
import { ScaleWatch } from "./controller-scale-watch.ts";
import { controllerWrites, runShardRows, shards, startReplicas } from "./controller-scale-shards.ts";
import { benchCluster, deleteNamespace, percentile } from "./controller-support.ts";

const counts = (process.env.BENCH_SCALE_COUNTS ?? "1000,10000").split(",").map(Number);
const taskCounts = (process.env.BENCH_SCALE_TASKS ?? "1,3").split(",").map(Number);
const crewOf = (tasks: number) => `tasks-${tasks}`;
/** Kickoffs spread evenly at this many a minute instead of all at once (p99 below saturation). */
const pace = Number(process.env.BENCH_SCALE_PACE ?? 0);
/** BENCH_SCALE_BASELINES=0: the controller's runs only (diagnostics; no ratio). */
const baselines = process.env.BENCH_SCALE_BASELINES !== "0";
/** More of the controller's environment, `NAME=value` separated by commas (A/B runs of its settings). */
const controllerEnv = Object.fromEntries(
  (process.env.BENCH_CONTROLLER_ENV ?? "")
    .split(",")
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
);
const runnerImage = "kubecrew:bench";
/**
 * The controller's heap as in the chart's pod: its 512 Mi memory limit makes Node give V8 a 256 MB old generation
 * (`heap_size_limit` 268 MB in the image under `docker run --memory 512m`). Here, on a machine of 24 GB and no limit,
 * V8 would allow 4 GB and let the old generation grow far past what is live between full GCs.
 */
const podHeap = "--max-old-space-size=256";
// The controller runs compiled to JavaScript, as in the image (bench/as-image.ts).
const compiledCli = compileAsImage()(join(import.meta.dirname, "..", "cli", "main.ts"));

if (await runShardRows(import.meta.filename)) process.exit(0);
const audit = statusWriteAudit();
const cluster = benchCluster(["--kwok"], audit?.clusterEnv);
const client = new KubeClient(cluster.kubeConfig);
/** A namespace with the crews; their tasks may wait long for a pod (a deadline is not what this measures). */
async function scaleNamespace(): Promise<string> {
  const ns = await createNamespace(cluster.kubeconfig, "scale");
  for (const tasks of taskCounts) {
    const yaml = crewYaml(crewOf(tasks), "mock", { tasks, taskTimeout: 3600, executionTimeout: 7200 });
    await applyCrew(cluster.kubeconfig, ns, yaml);
  }
  return ns;
}
let replicas: ControllerProcess[] = [];
const informers: { stop(): Promise<void> }[] = [];
const namespaces: string[] = [];
try {
  const namespace = await scaleNamespace();
  const baseNamespace = await scaleNamespace();
  namespaces.push(namespace, baseNamespace);
  const crewSpecs = new Map(
    await Promise.all(
      taskCounts.map(async (n) => {
        const crew = await client.get<KubeObject>(resourcePath(CREWS, namespace, crewOf(n)));
        return [n, { name: crewOf(n), spec: crewSpecSchema.parse(crew.spec) }] as const;
      }),
    ),
  );

  // What the bench sees: each execution's finish and each task's success in its status; each Job's completion.
  const uids = new Map<string, string>();
  const watch = new ScaleWatch(client, namespace);
  const { finished, failedExecutions, taskSeen, jobsDone } = watch;
  const runner = new RunnerStandIn({ client, namespace, uidOf: (e) => uids.get(e) });
  const observer = new LatencyObserver(cluster.kubeconfig, namespace, audit !== undefined);
  await Promise.all([watch.start(), runner.start(), observer.start()]);
  informers.push(watch, runner, observer);

  const image = imageEnv();
  replicas = await startReplicas(cluster.kubeconfig, namespace, compiledCli, {
    ...image,
    NODE_OPTIONS: `${image.NODE_OPTIONS ?? ""} ${podHeap}`.trim(),
    LOG_LEVEL: "warn",
    KUBECREW_RUNNER_IMAGE: runnerImage,
    KUBECREW_RUNNER_SERVICE_ACCOUNT: RUNNER_SA,
    ...(process.env.BENCH_WORKERS ? { KUBECREW_CONTROLLER_WORKERS: process.env.BENCH_WORKERS } : {}),
    ...controllerEnv,
  });
  const controller = replicas[0]!;
  const pid = replicas.map((r) => r.child.pid).join(",");
  // One shard: the controller's own figures; more: the replicas' together (CPU, writes), RSS the largest replica's.
  const cpuOf = () => replicas.reduce((sum, r) => sum + cpuSeconds(r.child.pid), 0);
  const rssOf = () => Math.max(...replicas.map((r) => rssMb(r.child.pid)));
  const rssAtStart = rssOf();
  const apiserverPid = controlPlanePid(cluster.kubeconfig, "kube-apiserver");
  const etcdPid = controlPlanePid(cluster.kubeconfig, "etcd");
  const controlPlaneCpu = () => cpuSeconds(apiserverPid) + cpuSeconds(etcdPid);
  const probe = new Probe({
    kubeconfig: cluster.kubeconfig,
    kubeConfig: cluster.kubeConfig,
    controllerPid: controller.child.pid,
    controllerUrl: controller.url,
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const settings = { defaultImage: runnerImage, defaultServiceAccount: RUNNER_SA, runnerCommand: ["kubecrew"] };

  console.log(
    `controller scale on the local control plane with KWOK (one fake node), ${shards === 1 ? "one controller replica" : `${shards} shards over ${shards} controller replicas`} (pid ${pid});` +
      ` counts ${counts.join(", ")}, crews of ${taskCounts.join(" and ")} task(s); controller RSS at start` +
      ` ${rssAtStart.toFixed(0)} MB; its heap as in the chart's pod (${podHeap})` +
      (pace ? `; kickoffs paced at ${pace}/min` : "") +
      (Object.keys(controllerEnv).length ? `; controller env ${JSON.stringify(controllerEnv)}` : ""),
  );
  const allLatencies: number[] = [];
  let headline: { rate: number; ratio: number } | undefined;
  let created = 0;
  for (const count of counts) {
    for (const tasks of taskCounts) {
      const crew = crewSpecs.get(tasks)!;
      const prefix = `t${tasks}-n${count}`;
      const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
      const timeoutMs = Math.max(600_000, count * tasks * 200);
      const writes0 = await controllerWrites(replicas);
      const cpu0 = cpuOf();
      const plane0 = controlPlaneCpu();
      const apiserverCpu0 = cpuSeconds(apiserverPid);
      const snap0 = await probe.snapshot();
      loopDelay.reset();
      const t0 = performance.now();
      const t0Epoch = epochMs();
      await Promise.all(
        names.map(async (name, i) => {
          if (pace) await new Promise((r) => setTimeout(r, t0 + (i * 60_000) / pace - performance.now()));
          const e = await client.create<KubeObject>(resourcePath(CREW_EXECUTIONS, namespace), {
            apiVersion: CREW_EXECUTIONS.apiVersion,
            kind: CREW_EXECUTIONS.kind,
            metadata: { name, namespace },
            spec: { crewRef: { name: crew.name }, inputs: { topic: "bench" } },
          });
          uids.set(name, e.metadata!.uid!);
        }),
      );
      // Progress: every 5 s with BENCH_SCALE_VERBOSE=1, every 30 s in runs of 5,000 or more (they take long): how
      // far it got, what the controller's queue holds, and the apiserver's and the controller's RSS and CPU so far.
      const every = process.env.BENCH_SCALE_VERBOSE ? 5000 : count >= 5000 ? 30_000 : 0;
      const sampler = every
        ? setInterval(() => {
            void (async () => {
              const text = await (await fetch(`${controller.url}/metrics`)).text();
              const gauge = (n: string) =>
                text
                  .split("\n")
                  .find((l) => l.startsWith(n + " "))
                  ?.split(" ")[1];
              console.log(
                `    ${((performance.now() - t0) / 1000).toFixed(0)} s: ${names.filter((n) => finished.has(n)).length}` +
                  ` done, ${runner.reported.size} results, queue ${gauge("kubecrew_controller_queue_depth")},` +
                  ` in flight ${gauge("kubecrew_controller_reconciles_in_flight")};` +
                  ` apiserver ${rssMb(apiserverPid).toFixed(0)} MB, ${(cpuSeconds(apiserverPid) - apiserverCpu0).toFixed(0)} s CPU;` +
                  ` controller ${rssOf().toFixed(0)} MB, ${(cpuOf() - cpu0).toFixed(0)} s CPU; load ${loadavg()[0]!.toFixed(1)}`,
              );
            })().catch(() => undefined);
          }, every)
        : undefined;
      await waitFor(
        `${count} executions of ${tasks} task(s)`,
        async () => names.every((n) => finished.has(n)),
        timeoutMs,
        50,
      );
      clearInterval(sampler);
      const seconds = (performance.now() - t0) / 1000;
      const snap1 = await probe.snapshot();
      const benchLoopP99 = loopDelay.percentile(99) / 1e6;
      const cpu = cpuOf() - cpu0;
      const plane = controlPlaneCpu() - plane0;
      const writes = (await controllerWrites(replicas)) - writes0;
      created += count;
      const latencies = names.flatMap((n) =>
        Array.from({ length: tasks }, (_, i) => {
          const reported = runner.reported.get(`${n}/${i}`);
          const seen = taskSeen.get(`${n}/${i}`);
          return reported !== undefined && seen !== undefined ? Math.max(0, seen - reported) : [];
        }).flat(),
      );
      allLatencies.push(...latencies);
      const observed = await observer.collect();
      const times: TaskTimes[] = names.flatMap((n, order) =>
        Array.from({ length: tasks }, (_, i) => {
          const key = `${n}/${i}`;
          const created = runner.reported.get(key);
          if (created === undefined) return [];
          return [
            {
              key,
              order,
              created,
              resultSeen: observed.resultSeen.get(key),
              decided: observed.decided.get(key),
              statusSeen: observed.statusSeen.get(key),
              benchSeen: taskSeen.get(key),
            },
          ];
        }).flat(),
      );
      // Untimed: the Jobs' pods finish before the baseline starts, so it does not share the CPUs with them.
      const ownJobs = names.flatMap((n) => Array.from({ length: tasks }, (_, i) => `${namespace}/${n}-${i}`));
      await waitFor("the controller's Jobs complete", async () => ownJobs.every((j) => jobsDone.has(j)), timeoutMs, 50);
      const rss = rssOf();

      const baseNames = names.map((n) => `b-${n}`);
      const basePlane0 = controlPlaneCpu();
      const snap2 = await probe.snapshot();
      const baseT0 = performance.now();
      const baseSeconds = baselines
        ? await baselineWrites({ client, namespace: baseNamespace, crew, names: baseNames, settings })
        : NaN;
      const basePlane = controlPlaneCpu() - basePlane0;
      const snap3 = await probe.snapshot();
      const baseJobs = baseNames.flatMap((n) => Array.from({ length: tasks }, (_, i) => `${baseNamespace}/${n}-${i}`));
      if (baselines)
        await waitFor(
          "the baseline's Jobs complete",
          async () => baseJobs.every((j) => jobsDone.has(j)),
          timeoutMs,
          50,
        );
      const baseWithPods = baselines ? (performance.now() - baseT0) / 1000 : NaN;
      const snap4 = await probe.snapshot();

      const rate = (count / seconds) * 60;
      const baseRate = (count / baseSeconds) * 60;
      if (tasks === (taskCounts.includes(1) ? 1 : taskCounts[0])) headline = { rate, ratio: rate / baseRate };
      console.log(`${count} executions of ${tasks} task(s)${pace ? ` (kickoffs paced at ${pace}/min)` : ""}:`);
      console.log(`  controller        ${seconds.toFixed(1)} s → ${rate.toFixed(0)} executions/min`);
      const podsRate = (count / baseWithPods) * 60;
      console.log(`  baseline writes   ${baseSeconds.toFixed(1)} s → ${baseRate.toFixed(0)} executions/min`);
      console.log(
        `  baseline + pods   ${baseWithPods.toFixed(1)} s → ${podsRate.toFixed(0)} executions/min` +
          ` (until the cluster also ran its Jobs: pods created, bound, Running, Succeeded; Jobs Complete)`,
      );
      console.log(
        `  ratio             ${(rate / baseRate).toFixed(2)} against the writes (the issue's baseline);` +
          ` ${(rate / podsRate).toFixed(2)} against the writes with their pods`,
      );
      console.log(
        `  controller        ${((cpu / count) * 1000).toFixed(2)} ms CPU per execution, ${(writes / count).toFixed(2)}` +
          ` writes per execution (Events included), RSS ${rss.toFixed(0)} MB with ${created} executions in its caches`,
      );
      console.log(
        `  apiserver + etcd  ${((plane / count) * 1000).toFixed(2)} ms CPU per execution` +
          ` (baseline ${((basePlane / count) * 1000).toFixed(2)} ms)`,
      );
      console.log(
        `  result → status   p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms` +
          ` (${latencies.length} tasks)` +
          (runner.failures ? `; the stand-in's creates failed ${runner.failures} times (retried)` : ""),
      );
      for (const line of latencyLines(times, t0Epoch)) console.log(`  ${line}`);
      for (const line of (await audit?.lines(times, observed, namespace, t0Epoch)) ?? []) console.log(`  ${line}`);
      if (observed.relists > 0) console.log(`  the observer relisted ${observed.relists} times (410 Gone)`);
      // Where each phase spent the machine, per execution (BENCH_SCALE_PROBE=0: not printed).
      if (process.env.BENCH_SCALE_PROBE !== "0") {
        const phases = (
          [
            ["controller run", snap0, snap1],
            ["baseline writes", snap2, snap3],
            ["baseline + pods", snap2, snap4],
          ] as const
        ).slice(0, baselines ? 3 : 1);
        for (const [phase, before, after] of phases) {
          console.log(`  ${phase}:`);
          console.log(`    CPU ms/execution  ${probe.cpuLine(before, after, count)}`);
          for (const line of probe.apiserverLines(before, after, count)) console.log(`    ${line}`);
          console.log(`    ${probe.statusPatchLine(before, after)}`);
        }
        console.log(`  controller run, the controller's side${replicas.length > 1 ? " (first replica)" : ""}:`);
        for (const line of probe.controllerLines(snap0, snap1, count)) console.log(`    ${line}`);
        console.log(`    the bench's own event loop delay p99 ${benchLoopP99.toFixed(0)} ms`);
      }
      if (failedExecutions.length > 0 || watch.failedJobs > 0)
        console.log(`  FAILED            ${failedExecutions.length} executions, ${watch.failedJobs} Jobs (so far)`);
    }
  }
  const rss = rssOf();
  console.log(
    `controller: ${cpuOf().toFixed(1)} s CPU in all, RSS ${rss.toFixed(0)} MB with ${created} executions` +
      ` and their children in its caches`,
  );
  if (audit) console.log(audit.summary(percentile(allLatencies, 99)));
  console.log(
    `executions/min ${headline!.rate.toFixed(0)}; ratio ${headline!.ratio.toFixed(2)}; rss_mb ${rss.toFixed(0)};` +
      ` status_p99_ms ${percentile(allLatencies, 99).toFixed(0)}`,
  );
} finally {
  for (const r of replicas) await r.kill("SIGTERM");
  for (const i of informers) await i.stop();
  for (const ns of namespaces) await deleteNamespace(cluster.kubeconfig, ns);
  client.close();
  cluster.stop();
  audit?.close();
}
