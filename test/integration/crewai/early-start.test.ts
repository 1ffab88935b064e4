import { spawn } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskOutcome } from "../../../core/task-assignment.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { crewaiPython } from "../../support/crewai.ts";
import { answer, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";

// `kubecrew runner` with a crewai task, as kubecrew dev and a task pod start it: the real CLI entry, the real adapter
// and CrewAI. Its Python is the venv's behind a script that notes when it was started.
const repoRoot = resolve(import.meta.dirname, "../../..");
const node = join(repoRoot, "node_modules/.bin/node");
const main = join(repoRoot, "cli/main.ts");
let llm: LlmFixture;
let dir: string;

beforeAll(async () => {
  llm = await startLlmFixture();
  dir = await mkdtemp(join(tmpdir(), "kubecrew-early-"));
});
afterAll(async () => {
  await llm?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function runRunner(
  baseURL: string,
): Promise<{ code: number | null; log: string; startedAt: number; outcome: unknown }> {
  const started = join(dir, "started");
  const python = join(dir, "python");
  await writeFile(python, `#!/bin/sh\ndate +%s%3N > '${started}'\nexec '${crewaiPython()}' "$@"\n`);
  await chmod(python, 0o755);
  const assignment = join(dir, "assignment.json");
  const outcome = join(dir, "outcome.json");
  const llmConfig = { provider: "openai-compatible" as const, model: "llama3", baseURL };
  await writeFile(assignment, JSON.stringify({ ...testAssignment({ llm: llmConfig }), runtime: "crewai" }));
  const child = spawn(node, [main, "runner", "--assignment", assignment, "--outcome", outcome], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      KUBECREW_CREWAI_PYTHON: python,
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (log += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (log += c));
  const code = await new Promise<number | null>((done) => child.once("close", done));
  return {
    code,
    log,
    startedAt: Number(await readFile(started, "utf8")),
    outcome: JSON.parse(await readFile(outcome, "utf8")),
  };
}

// `import crewai` alone takes seconds; on a busy machine a task takes tens of them.
describe("a crewai task's adapter", { timeout: 240_000 }, () => {
  it("starts as the runner starts, before the runner has loaded its modules, and runs the task", async () => {
    llm.enqueue(answer("Started early."));
    const { code, log, startedAt, outcome } = await runRunner(llm.baseURL);
    expect(code, log).toBe(0);
    expect(taskOutcome.parse(outcome).output).toBe("Started early.");
    // The runner logs "Task started" once its modules are loaded and the task's model and tools are resolved: the
    // adapter was already running then (before, it was started only after that line).
    const line = log.split("\n").find((l) => l.includes('"msg":"Task started"'));
    expect(line, log).toBeDefined();
    const taskStarted = JSON.parse(line!) as { time: string | number; startedEarly?: boolean };
    expect(taskStarted.startedEarly).toBe(true);
    expect(startedAt).toBeLessThan(new Date(taskStarted.time).getTime());
    expect(JSON.stringify(llm.requests.at(-1)?.body)).toContain("Senior Writer");
  });

  it("still sends every request through the egress proxy, whose address it learns from the launch message", async () => {
    const { code, outcome } = await runRunner("http://169.254.169.254/v1");
    expect(code).toBe(1);
    expect(taskOutcome.parse(outcome).error).toContain("169.254.169.254 is a cloud metadata address");
  });
});
