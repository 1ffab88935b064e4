/**
 * bench/flows: a declarative flow of BENCH_METHODS agent methods in a chain (each a child execution whose task runs as
 * a local runner process, on the mock provider) in `kubecrew dev`, against the same number of one-task crews run one
 * after another in the same process and run: seconds per method and per crew, and the flow's rate as a share of the
 * crews' (target ≥ 0.9). BENCH_ROUNDS alternates the two that many times; the medians are reported.
 *   npm run bench:flows   [BENCH_METHODS=20 BENCH_ROUNDS=2]
 */
import { loadavg } from "node:os";
import { silentLogger } from "../core/logger.ts";
import { crewYaml, startTestDev, tokens } from "../test/support/dev-server.ts";

const METHODS = Number(process.env.BENCH_METHODS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

/** A chain: m1 starts, each next method listens to the one before; every method asks one agent. */
function chainFlow(methods: number): string {
  const lines = ["schema: crewai.flow/v1", "name: ChainFlow", "methods:"];
  for (let i = 1; i <= methods; i++) {
    lines.push(`  m${i}:`);
    lines.push(i === 1 ? "    start: true" : `    listen: m${i - 1}`);
    lines.push("    do:", "      call: agent", "      with:");
    lines.push("        role: Writer", "        goal: Write one line", "        backstory: Brief.");
    lines.push(`        input: "Line ${i}"`);
  }
  return lines.join("\n") + "\n";
}

console.log(`bench:flows: ${METHODS} methods against ${METHODS} one-task crews, ${ROUNDS} rounds; load ${load()}`);
const dev = await startTestDev(
  { "chain-flow.yaml": chainFlow(METHODS), "single.yaml": crewYaml("single", "mock", { tasks: 1 }) },
  { log: silentLogger(), env: { KUBECREW_LLM_PROVIDER: "mock", KUBECREW_LLM_MODEL: "mock" } },
);
const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };
async function call(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${dev.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status !== 200) throw new Error(`bench:flows: ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}
async function finished(path: string, deadlineMs: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const body = await call(path);
    if (body.status !== "running") return body;
    if (Date.now() > deadline) throw new Error(`bench:flows: ${path} not finished within ${deadlineMs} ms`);
    await sleep(25);
  }
}

async function crews(): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < METHODS; i++) {
    const { kickoff_id } = await call("/crews/single/kickoff", { inputs: { topic: `line ${i}` } });
    const end = await finished(`/crews/single/status/${String(kickoff_id)}`, 120_000);
    if (end.status !== "completed") throw new Error(`bench:flows: a crew ended ${JSON.stringify(end)}`);
  }
  return (performance.now() - started) / 1000 / METHODS;
}

async function flow(): Promise<number> {
  const started = performance.now();
  const { kickoff_id } = await call("/flows/chain-flow/kickoff", { inputs: {} });
  const end = await finished(`/flows/chain-flow/status/${String(kickoff_id)}`, 60_000 + METHODS * 10_000);
  if (end.status !== "completed") throw new Error(`bench:flows: the flow ended ${JSON.stringify(end)}`);
  return (performance.now() - started) / 1000 / METHODS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perCrew: number[] = [];
const perMethod: number[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    perCrew.push(await crews());
    perMethod.push(await flow());
    console.log(
      `round ${round}: ${perMethod.at(-1)!.toFixed(3)} s per flow method, ${perCrew.at(-1)!.toFixed(3)} s per crew; load ${load()}`,
    );
  }
} finally {
  await dev.stop();
}
const method = median(perMethod);
const crew = median(perCrew);
console.log(
  `bench:flows: ${(60 / method).toFixed(1)} methods/min (${method.toFixed(3)} s each), ` +
    `${(60 / crew).toFixed(1)} crews/min (${crew.toFixed(3)} s each); the flow's rate is ${(crew / method).toFixed(2)} of the crews' (target ≥ 0.9)`,
);
