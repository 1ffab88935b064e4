/**
 * bench/tracing: what exporting traces costs. Runs a bench with tracing off and on (OTEL_EXPORTER_OTLP_ENDPOINT at the
 * real OpenTelemetry Collector this process starts, hack/tools.sh ensure), alternately, BENCH_TRACING_ROUNDS times
 * each (default 2), in the same run; prints each run's throughput and CPU, and on/off ratios. CPU: for status the
 * server's per request as bench:status measures it; for controller-throughput the whole run's (the bench process with
 * its controller, the local node's task runners, the control plane: every process it waited for) per execution, all
 * its phases counted. Targets (issue 35):
 * throughput ≥ 0.9 of off, CPU per execution (per request for status) ≤ 1.1 of off.
 *   npm run bench:tracing -- status                  npm run bench:status with tracing off/on
 *   npm run bench:tracing -- controller-throughput   npm run bench:controller-throughput with tracing off/on
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { startCollector } from "../test/support/otel-collector.ts";

const which = process.argv[2];
/** A run's figures: its throughput, and its CPU per unit of work when the bench measures it itself. */
interface Figures {
  rate: number;
  work: number;
  cpuPerWork?: number;
}
const benches: Record<string, { script: string; figures: (out: string) => Figures }> = {
  status: { script: "bench/status.ts", figures: statusFigures },
  "controller-throughput": { script: "bench/controller-throughput.ts", figures: throughputFigures },
};
const bench = which ? benches[which] : undefined;
if (!bench) {
  console.error(`usage: npm run bench:tracing -- ${Object.keys(benches).join("|")}`);
  process.exit(2);
}
const rounds = Number(process.env.BENCH_TRACING_ROUNDS ?? 2);

/** This process's children's CPU seconds so far (user + system of every child it waited for, and theirs): /proc. */
function childrenCpuSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command's closing parenthesis; cutime and cstime are the 16th and 17th of the line.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** The completed execution's row: its median req/s and the server's CPU per request (µs), as bench:status measures. */
function statusFigures(out: string): Figures {
  const row = /kubecrew dev, completed\s+(\d+)\s+[\d.]+\s+\S+ ms\s+(\d+) µs/.exec(out);
  return { rate: Number(row?.[1]), work: 1, cpuPerWork: Number(row?.[2]) / 1e6 };
}

function throughputFigures(out: string): Figures {
  const match = /kubecrew executions\s+[\d.]+ s → (\d+) per minute/.exec(out);
  // Every execution the bench runs: the timed 1-task ones, 3 warm-up, 10 of 3 tasks, 2 × the 4-task crews.
  const executions =
    Number(process.env.BENCH_EXECUTIONS ?? 40) + 3 + 10 + 2 * Number(process.env.BENCH_DAG_EXECUTIONS ?? 5);
  return { rate: Number(match?.[1]), work: executions };
}

async function runOnce(env: NodeJS.ProcessEnv): Promise<{ rate: number; cpuPerWork: number; out: string }> {
  const before = childrenCpuSeconds();
  const child = spawn(process.execPath, [bench!.script], { env, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`${bench!.script} exited with ${code}:\n${out}`);
  const cpu = childrenCpuSeconds() - before;
  const figures = bench!.figures(out);
  const cpuPerWork = figures.cpuPerWork ?? cpu / figures.work;
  if (!Number.isFinite(figures.rate) || !Number.isFinite(cpuPerWork)) {
    throw new Error(`no figures in the output of ${bench!.script}:\n${out}`);
  }
  return { rate: figures.rate, cpuPerWork, out };
}

const collector = await startCollector();
const off: { rate: number; cpuPerWork: number }[] = [];
const on: { rate: number; cpuPerWork: number }[] = [];
const unit = which === "status" ? "request" : "execution";
try {
  for (let round = 1; round <= rounds; round++) {
    const plain = { ...process.env };
    for (const name of Object.keys(plain)) if (name.startsWith("OTEL_")) delete plain[name];
    const traced = { ...plain, OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint };
    for (const [label, env, list] of [
      ["off", plain, off],
      ["on ", traced, on],
    ] as const) {
      const result = await runOnce(env);
      list.push(result);
      console.log(
        `round ${round} tracing ${label}: ${result.rate.toFixed(which === "status" ? 0 : 1)} ${which === "status" ? "req/s" : "executions/min"}, ` +
          `${(result.cpuPerWork * 1000).toFixed(which === "status" ? 3 : 1)} ms CPU per ${unit}`,
      );
    }
  }
  const mean = (list: { rate: number; cpuPerWork: number }[], key: "rate" | "cpuPerWork") =>
    list.reduce((n, r) => n + r[key], 0) / list.length;
  const spans = collector.spans().length;
  console.log(
    `bench:${which} with tracing on against off, ${rounds} rounds each, alternating (${spans} spans exported)`,
  );
  console.log(`  throughput on/off       ${(mean(on, "rate") / mean(off, "rate")).toFixed(2)} (target ≥ 0.90)`);
  console.log(
    `  CPU per ${unit} on/off  ${(mean(on, "cpuPerWork") / mean(off, "cpuPerWork")).toFixed(2)} (target ≤ 1.10)`,
  );
} finally {
  await collector.stop();
}
