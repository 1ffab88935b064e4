/**
 * bench/crewai-start (issue 30): where a crewai task's start goes — `kubecrew runner` run as kubecrew dev and a task
 * pod run it (the real CLI, adapter and CrewAI from hack/crewai-venv.sh) against the OpenAI-compatible fixture, and the
 * moment each phase ended, counted from the runner's process start: the adapter's Python started, its interpreter up,
 * `import crewai` done, the launch message read, CrewAI's agent and task built, the first model request at the
 * fixture. bench/crewai_start_phases.py notes the adapter's phases; it wraps, and changes nothing.
 *   node bench/crewai-start.ts   [BENCH_ROUNDS=5] [BENCH_CHECKOUT=<another checkout, for its runner and adapter>]
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { testAssignment } from "../runner/test-assignment.ts";
import { crewaiPython } from "../test/support/crewai.ts";
import { startLlmFixture } from "../test/support/llm-fixture.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const checkout = resolve(process.env.BENCH_CHECKOUT ?? join(import.meta.dirname, ".."));
const load = () => loadavg()[0]!.toFixed(1);

const llm = await startLlmFixture();
// The fixture keeps no times: each request is stamped (epoch ms) as the fixture records it.
const times: number[] = [];
const push = llm.requests.push.bind(llm.requests);
llm.requests.push = (...items) => {
  for (const _ of items) times.push(Date.now());
  return push(...items);
};
const dir = await mkdtemp(join(tmpdir(), "bench-crewai-start-"));
const marks = join(dir, "marks");
const python = join(dir, "python");
// The adapter of the checkout measured (its folder first on the path), started as the runner starts it.
await writeFile(
  python,
  `#!/bin/sh
echo "python started $(date +%s.%N)" >> '${marks}'
PYTHONPATH='${join(checkout, "crewai-adapter")}' exec '${crewaiPython()}' '${join(import.meta.dirname, "crewai_start_phases.py")}'
`,
);
await chmod(python, 0o755);
const assignment = join(dir, "assignment.json");
const llmConfig = { provider: "openai-compatible" as const, model: "bench-model", baseURL: llm.baseURL };
await writeFile(assignment, JSON.stringify({ ...testAssignment({ llm: llmConfig }), runtime: "crewai" }));

const phases = new Map<string, number[]>();
try {
  console.log(`bench:crewai-start — ${checkout}, ${ROUNDS} rounds, load average at start ${load()}`);
  for (let round = 1; round <= ROUNDS; round++) {
    await rm(marks, { force: true });
    const asked = times.length;
    const t0 = Date.now() / 1000;
    const child = spawn(
      process.execPath,
      [join(checkout, "cli/main.ts"), "runner", "--assignment", assignment, "--outcome", join(dir, "outcome.json")],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          KUBECREW_CREWAI_PYTHON: python,
          BENCH_T0: String(t0),
          BENCH_MARKS: marks,
        },
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    const code = await new Promise((done) => child.once("close", done));
    if (code !== 0) throw new Error(`round ${round}: the runner exited with ${String(code)}`);
    const seen = (await readFile(marks, "utf8"))
      .trim()
      .split("\n")
      .map((line) => {
        const at = Number(line.slice(line.lastIndexOf(" ") + 1));
        // The shell's line holds the epoch time; the adapter's, seconds since t0.
        return [line.slice(0, line.lastIndexOf(" ")), at > 1e9 ? at - t0 : at] as const;
      });
    seen.push(["first model request", times[asked]! / 1000 - t0]);
    seen.sort((a, b) => a[1] - b[1]);
    for (const [name, at] of seen) phases.set(name, [...(phases.get(name) ?? []), at]);
    console.error(`round ${round} (load ${load()}): ${seen.map(([n, at]) => `${n} ${at.toFixed(2)}`).join(", ")}`);
  }
} finally {
  await llm.stop();
  await rm(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log("phase ended (s since the runner's start): median (each round)");
for (const [name, xs] of phases) {
  console.log(`  ${name.padEnd(22)} ${median(xs).toFixed(2)} (${xs.map((x) => x.toFixed(2)).join(", ")})`);
}
console.log(`load average at the end ${load()}`);
