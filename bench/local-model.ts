/**
 * `npm run bench:local-model`: the pulled model (`kubecrew model pull`) on this machine through the local provider,
 * as a task's turn runs it, at each thread count of BENCH_THREADS (default: 1, the provider's default and every
 * core): time to the first token, tokens per second, and the runner process's RSS once the model is loaded, with the
 * core count and the load average. Each thread count runs in a process of its own (its own load, its own RSS),
 * BENCH_ROUNDS times (default 2) in turn — 1, 2, 1, 2 — so a machine whose load drifts weighs on each alike. Each run:
 * BENCH_RUNS prompts (default 3) of at most BENCH_MAX_TOKENS tokens (default 128).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { DEFAULT_LOCAL_MODEL, localModelPath } from "../core/local-models.ts";
import { defaultLocalThreads } from "../runner/local-llama.ts";
import { createLocalLanguageModel } from "../runner/local-model.ts";

interface Measured {
  threads: number;
  firstLoadAndTurnMs: number;
  medianTimeToFirstTokenMs: number;
  medianTokensPerSecond: number;
  tokensPerSecond: number[];
  rssMiB: number;
}

const path = localModelPath(DEFAULT_LOCAL_MODEL, process.env);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One process's measurement at `threads`. */
async function measure(threads: number): Promise<Measured> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? 128);
  let firstChunkAt = 0;
  const model = createLocalLanguageModel({
    modelId: DEFAULT_LOCAL_MODEL,
    path,
    contextSize: 2048,
    threads,
    onTextChunk: () => (firstChunkAt ||= performance.now()),
  });
  const prompt = (text: string) =>
    [{ role: "user", content: [{ type: "text", text }] }] as Parameters<typeof model.doGenerate>[0]["prompt"];
  const loadStart = performance.now();
  await model.doGenerate({ prompt: prompt("Hi"), maxOutputTokens: 1 });
  const loadMs = performance.now() - loadStart;
  const rows: { ttftMs: number; tokensPerSecond: number }[] = [];
  for (let i = 0; i < runs; i++) {
    firstChunkAt = 0;
    const started = performance.now();
    const result = await model.doGenerate({
      prompt: prompt(`Write a short paragraph about tides (${i}).`),
      maxOutputTokens: maxTokens,
    });
    const ended = performance.now();
    const tokens = result.usage.outputTokens.total ?? 0;
    rows.push({
      ttftMs: Math.round(firstChunkAt - started),
      tokensPerSecond: Math.round((tokens / ((ended - firstChunkAt) / 1000)) * 10) / 10,
    });
  }
  return {
    threads,
    firstLoadAndTurnMs: Math.round(loadMs),
    medianTimeToFirstTokenMs: median(rows.map((r) => r.ttftMs)),
    medianTokensPerSecond: median(rows.map((r) => r.tokensPerSecond)),
    tokensPerSecond: rows.map((r) => r.tokensPerSecond),
    rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
  };
}

const child = process.env.BENCH_CHILD_THREADS;
if (child) {
  console.log(JSON.stringify(await measure(Number(child))));
  process.exit(0);
}

if (!existsSync(path)) {
  console.error(`no model at ${path}: npm run kubecrew -- model pull`);
  process.exit(1);
}
const cores = availableParallelism();
const threadCounts = (process.env.BENCH_THREADS ?? `1,${defaultLocalThreads(cores)},${cores}`)
  .split(",")
  .map(Number)
  .filter((n, i, all) => Number.isInteger(n) && n > 0 && all.indexOf(n) === i);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const loadAtStart = loadavg()[0]!;
const measured: Measured[] = [];
for (let round = 0; round < rounds; round++) {
  for (const threads of threadCounts) {
    const out = execFileSync(process.execPath, [import.meta.filename], {
      env: { ...process.env, BENCH_CHILD_THREADS: String(threads) },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = JSON.parse(out.trim().split("\n").at(-1)!) as Measured;
    console.error(`threads ${threads}: ${line.medianTokensPerSecond} tokens/s (${line.tokensPerSecond.join(", ")})`);
    measured.push(line);
  }
}
console.log(
  JSON.stringify(
    {
      model: DEFAULT_LOCAL_MODEL,
      cores,
      cpu: cpus()[0]?.model,
      defaultThreads: defaultLocalThreads(cores),
      loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0] },
      byThreads: threadCounts.map((threads) => {
        const mine = measured.filter((m) => m.threads === threads);
        return {
          threads,
          medianTokensPerSecond: median(mine.flatMap((m) => m.tokensPerSecond)),
          medianTimeToFirstTokenMs: median(mine.map((m) => m.medianTimeToFirstTokenMs)),
          firstLoadAndTurnMs: mine.map((m) => m.firstLoadAndTurnMs),
          rssMiB: Math.max(...mine.map((m) => m.rssMiB)),
          tokensPerSecond: mine.map((m) => m.tokensPerSecond),
        };
      }),
    },
    null,
    2,
  ),
);
