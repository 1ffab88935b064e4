/**
 * Load generation for the HTTP benchmarks: autocannon's CLI in a child process, so this process's CPU time is the
 * servers' alone. Requests per second move with whatever else the machine does; CPU per request barely does. Each
 * round runs every load back to back, so a ratio within a round compares like with like even when the machine's
 * load drifts between rounds; the median of the per-round ratios is the figure to quote.
 */
import type autocannon from "autocannon";
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type express from "express";

const run = promisify(execFile);
const autocannonCli = fileURLToPath(new URL("../node_modules/autocannon/autocannon.js", import.meta.url));

/** autocannon's sample interval for a load bounded by an amount: the resolution of its duration. */
const AMOUNT_SAMPLE_MS = 10;

export const benchSettings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 20),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
};

export interface Load {
  name: string;
  options: autocannon.Options;
  /** CPU time (ms) used so far by the server under test, when it runs in another process. */
  cpuMs?: () => Promise<number>;
}

export interface Measurement {
  rps: number;
  p99: number;
  /** CPU time of the server under test per request, in microseconds (this process's unless the load says whose). */
  cpuUs: number;
}

export async function listen(app: express.Express): Promise<{ url: string; close(): void }> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

export async function measure(load: Load, duration = benchSettings.seconds): Promise<Measurement> {
  const { url, method, headers, body, amount } = load.options;
  // A load with an amount sends exactly that many requests (its duration is however long they take). autocannon
  // reports the end of a run at its next sample, once a second by default, so its duration would be rounded up to
  // whole seconds (1,500 requests done in 2.2 s read as 498/s): it samples every 10 ms for these.
  const bound = amount ? ["-a", String(amount), "-L", String(AMOUNT_SAMPLE_MS)] : ["-d", String(duration)];
  const args = [autocannonCli, "-j", "-c", String(benchSettings.connections), ...bound];
  if (method) args.push("-m", method);
  for (const [name, value] of Object.entries(headers ?? {})) args.push("-H", `${name}=${value}`);
  if (body) args.push("-b", String(body));
  args.push(String(url));
  const cpuMs = load.cpuMs ?? (async () => ((u) => (u.user + u.system) / 1000)(process.cpuUsage()));
  const before = await cpuMs();
  const { stdout } = await run(process.execPath, args);
  const cpuUsed = (await cpuMs()) - before;
  const result = JSON.parse(stdout) as autocannon.Result;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${load.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return {
    rps: amount ? result.requests.total / result.duration : result.requests.average,
    p99: result.latency.p99,
    cpuUs: (cpuUsed * 1000) / result.requests.total,
  };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Warms every load up, then measures them all once per round. */
export async function measureRounds(loads: Load[]): Promise<Rounds> {
  for (const load of loads) await measure(load, 1);
  const results = new Map(loads.map((l) => [l.name, [] as Measurement[]]));
  for (let round = 0; round < benchSettings.rounds; round++) {
    for (const load of loads) results.get(load.name)!.push(await measure(load));
  }
  return new Rounds(results, loads[0]!.name);
}

/** Measurements by load and round, with ratios against the first load (the baseline). */
export class Rounds {
  readonly results: Map<string, Measurement[]>;
  readonly baseline: string;

  constructor(results: Map<string, Measurement[]>, baseline: string) {
    this.results = results;
    this.baseline = baseline;
  }

  of(name: string, field: keyof Measurement): number[] {
    return this.results.get(name)!.map((r) => r[field]);
  }

  rpsRatio(name: string): number {
    return median(this.of(name, "rps").map((rps, i) => rps / this.of(this.baseline, "rps")[i]!));
  }

  cpuRatio(name: string): number {
    return median(this.of(name, "cpuUs").map((cpu, i) => cpu / this.of(this.baseline, "cpuUs")[i]!));
  }

  extraCpuUs(name: string): number {
    return median(this.of(name, "cpuUs").map((cpu, i) => cpu - this.of(this.baseline, "cpuUs")[i]!));
  }

  /** One line per load: median req/s, ratio to the baseline, p99, CPU per request and its ratio. */
  table(): string {
    const header =
      `  ${"".padEnd(28)} ${"req/s".padStart(7)} ${"× base".padStart(7)} ${"p99".padStart(6)} ` +
      `${"CPU/req".padStart(9)} ${"× base".padStart(7)}`;
    const rows = [...this.results.keys()].map(
      (name) =>
        `  ${name.padEnd(28)} ${median(this.of(name, "rps")).toFixed(0).padStart(7)} ` +
        `${this.rpsRatio(name).toFixed(2).padStart(7)} ${`${median(this.of(name, "p99"))} ms`.padStart(6)} ` +
        `${`${median(this.of(name, "cpuUs")).toFixed(0)} µs`.padStart(9)} ${this.cpuRatio(name).toFixed(2).padStart(7)}` +
        `   (req/s by round: ${this.of(name, "rps")
          .map((r) => r.toFixed(0))
          .join(", ")})`,
    );
    return [
      `${benchSettings.connections} connections, ${benchSettings.rounds} rounds of ${benchSettings.seconds}s each; medians`,
      header,
      ...rows,
    ].join("\n");
  }
}
