/**
 * bench/controller-scale with executions sharded over controller replicas (KUBECREW_CONTROLLER_SHARDS):
 * BENCH_SCALE_SHARDS=1,2,3 runs the whole bench once per shard count, each run a process of its own with its own
 * cluster, its own baseline and `shards` controller processes (one replica per shard), and prints one row per count.
 * One shard is the bench as it always was: one controller, no leader election.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { nodeBinary, startControllerProcess, waitFor, type ControllerProcess } from "../test/e2e/support/fixture.ts";

export const shardCounts = (process.env.BENCH_SCALE_SHARDS ?? "1").split(",").map(Number);
/** The apiserver writes the replicas made so far (their kubecrew_controller_apiserver_writes_total, summed). */
export async function controllerWrites(controllers: ControllerProcess[]): Promise<number> {
  let writes = 0;
  for (const controller of controllers) {
    const text = await (await fetch(`${controller.url}/metrics`)).text();
    writes += text
      .split("\n")
      .filter((l) => l.startsWith("kubecrew_controller_apiserver_writes_total"))
      .reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
  }
  return writes;
}

/** This run's shard count (the one of the rows being run). */
export const shards = shardCounts.length === 1 ? shardCounts[0]! : 1;

const HEADLINE = /^executions\/min (\d+); ratio ([\d.]+); rss_mb (\d+); status_p99_ms (\d+)$/;

/**
 * With more than one shard count: runs the bench (`script`) once per count, one after another, its output passed
 * through, then prints a row per count and, last, the one-shard run's last line. Answers false (nothing run) for one
 * count: the caller runs the bench itself.
 */
export async function runShardRows(script: string): Promise<boolean> {
  if (shardCounts.length <= 1) return false;
  const rows: { shards: number; line: string }[] = [];
  for (const count of shardCounts) {
    console.log(`— ${count} shard(s), ${count} controller replica(s) —`);
    const child = spawn(nodeBinary, [script], {
      env: { ...process.env, BENCH_SCALE_SHARDS: String(count) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let last = "";
    for await (const line of createInterface({ input: child.stdout })) {
      console.log(line);
      if (HEADLINE.test(line)) last = line;
    }
    const code = await new Promise<number | null>((resolve) =>
      child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", resolve),
    );
    if (code !== 0 || !last) throw new Error(`the ${count}-shard run failed (exit ${code})`);
    rows.push({ shards: count, line: last });
  }
  console.log("shards | replicas | executions/min | ratio (writes) | rss_mb per replica | status_p99_ms");
  for (const { shards: n, line } of rows) {
    const [, rate, ratio, rss, p99] = HEADLINE.exec(line)!;
    console.log(`${n} | ${n} | ${rate} | ${ratio} | ${rss} | ${p99}`);
  }
  console.log((rows.find((r) => r.shards === 1) ?? rows[0]!).line);
  return true;
}

/**
 * The controller replicas of this run: one controller without leader election for one shard (as the bench always
 * ran it), else one process per shard with KUBECREW_CONTROLLER_SHARDS, waited for until each holds one shard.
 */
export async function startReplicas(
  kubeconfig: string,
  namespace: string,
  cli: string,
  env: Record<string, string>,
): Promise<ControllerProcess[]> {
  if (shards === 1) {
    return [
      await startControllerProcess(kubeconfig, namespace, {
        identity: "scale",
        cli,
        env: { ...env, KUBECREW_LEADER_ELECT: "false" },
      }),
    ];
  }
  const replicas: ControllerProcess[] = [];
  for (let i = 0; i < shards; i++) {
    replicas.push(
      await startControllerProcess(kubeconfig, namespace, {
        identity: `scale-${i}`,
        cli,
        env: { ...env, KUBECREW_CONTROLLER_SHARDS: String(shards) },
        waitForLeader: false,
      }),
    );
  }
  const held = async (r: ControllerProcess) =>
    ((await (await fetch(`${r.url}/metrics`)).text()).match(/^kubecrew_controller_shard_held\{[^}]*\} 1$/gm) ?? [])
      .length;
  await waitFor(`${shards} replicas holding one shard each`, async () => {
    const counts = await Promise.all(replicas.map(held));
    return counts.every((n) => n === 1);
  });
  return replicas;
}
