/**
 * `npm run bench:local-model`: the pulled model (`kubecrew model pull`) on this machine through the local provider,
 * as a task's turn runs it: time to the first token, tokens per second, and the process's RSS once the model is
 * loaded, with the core count. BENCH_RUNS prompts (default 3), each at most BENCH_MAX_TOKENS tokens (default 128).
 */
import { availableParallelism, cpus } from "node:os";
import { existsSync } from "node:fs";
import { DEFAULT_LOCAL_MODEL, localModelPath } from "../core/local-models.ts";
import { createLocalLanguageModel } from "../runner/local-model.ts";

const path = localModelPath(DEFAULT_LOCAL_MODEL, process.env);
if (!existsSync(path)) {
  console.error(`no model at ${path}: npm run kubecrew -- model pull`);
  process.exit(1);
}
const runs = Number(process.env.BENCH_RUNS ?? 3);
const maxTokens = Number(process.env.BENCH_MAX_TOKENS ?? 128);
let firstChunkAt = 0;
const model = createLocalLanguageModel({
  modelId: DEFAULT_LOCAL_MODEL,
  path,
  contextSize: 2048,
  threads: availableParallelism(),
  onTextChunk: () => (firstChunkAt ||= performance.now()),
});
const prompt = (text: string) =>
  [{ role: "user", content: [{ type: "text", text }] }] as Parameters<typeof model.doGenerate>[0]["prompt"];
const loadStart = performance.now();
await model.doGenerate({ prompt: prompt("Hi"), maxOutputTokens: 1 });
const loadMs = performance.now() - loadStart;
const rows: { ttftMs: number; tokens: number; tokensPerSecond: number }[] = [];
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
    tokens,
    tokensPerSecond: Math.round((tokens / ((ended - firstChunkAt) / 1000)) * 10) / 10,
  });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  JSON.stringify(
    {
      model: DEFAULT_LOCAL_MODEL,
      cores: availableParallelism(),
      cpu: cpus()[0]?.model,
      firstLoadAndTurnMs: Math.round(loadMs),
      medianTimeToFirstTokenMs: median(rows.map((r) => r.ttftMs)),
      medianTokensPerSecond: median(rows.map((r) => r.tokensPerSecond)),
      rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
      runs: rows,
    },
    null,
    2,
  ),
);
process.exit(0);
