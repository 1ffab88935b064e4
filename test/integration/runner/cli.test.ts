import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import { taskOutcome, type TaskOutcome } from "../../../core/task-assignment.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { answer, httpError, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";

// `kubecrew runner --assignment <file> --outcome <file>` as the embedded mode spawns it: Node 24, the real CLI entry.
const repoRoot = resolve(import.meta.dirname, "../../..");
const node = join(repoRoot, "node_modules/.bin/node");
const main = join(repoRoot, "cli/main.ts");

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  outcome: TaskOutcome | undefined;
}

let fixture: LlmFixture;
let dir: string;
beforeAll(async () => {
  fixture = await startLlmFixture();
});
afterAll(() => fixture.stop());
beforeEach(async (context) => {
  fixture.requests.length = 0;
  dir = await mkdtemp(join(tmpdir(), "kubecrew-runner-"));
  context.onTestFinished(() => rm(dir, { recursive: true, force: true }));
});

async function runner(
  assignment: unknown,
  options: { env?: Record<string, string>; signalOnLog?: { msg: string; signal: NodeJS.Signals } } = {},
): Promise<RunResult> {
  const assignmentPath = join(dir, "assignment.json");
  const outcomePath = join(dir, "outcome.json");
  await writeFile(assignmentPath, typeof assignment === "string" ? assignment : JSON.stringify(assignment));
  const child = spawn(node, [main, "runner", "--assignment", assignmentPath, "--outcome", outcomePath], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let signalled = false;
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
    const when = options.signalOnLog;
    if (when && !signalled && stdout.includes(`"msg":"${when.msg}"`)) {
      signalled = true;
      child.kill(when.signal);
    }
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const code = await new Promise<number | null>((done) => child.once("close", (c) => done(c)));
  const outcome = existsSync(outcomePath)
    ? taskOutcome.parse(JSON.parse(await readFile(outcomePath, "utf8")))
    : undefined;
  return { code, stdout, stderr, outcome };
}

const mock = (model: string): LlmConfig => ({ provider: "mock", model });

describe("kubecrew runner", () => {
  it("runs a task on the mock provider: exit 0, the outcome file, JSON logs, nothing on stderr", async () => {
    const result = await runner(testAssignment({ llm: mock("mock") }));
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.outcome).toMatchObject({
      taskName: "write",
      taskIndex: 1,
      agent: "Senior Writer",
      model: "mock/mock",
    });
    expect(result.outcome!.output).toMatch(/^\[mock llm\] Answer to task "write" \(prompt sha256:[0-9a-f]{12}/);
    expect(result.outcome!.tokenUsage.totalTokens).toBeGreaterThan(0);
    const logs = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logs.map((l) => l.msg)).toEqual(["Task started", "Task succeeded"]);
  });

  it("reports a failed task: exit 1, the error outcome, and the message as one line on stderr", async () => {
    const result = await runner(testAssignment({ llm: mock("fail") }));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("LLM call to mock/fail failed: mock llm: failure requested\n");
    expect(result.outcome).toMatchObject({ error: "LLM call to mock/fail failed: mock llm: failure requested" });
    expect(result.outcome!.output).toBeUndefined();
  });

  it("fails a task whose output is above 1 MiB", async () => {
    const result = await runner(testAssignment({ llm: mock("size-1048577") }));
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("Task output is 1048577 bytes, above the 1 MiB limit\n");
    expect(result.outcome!.error).toBe("Task output is 1048577 bytes, above the 1 MiB limit");
  });

  it("runs a task on an openai-compatible server, retrying a 429, without logging the key", async () => {
    fixture.enqueue(
      httpError(429, "Slow down", { "retry-after-ms": "50" }),
      answer("Agents are programs that act.", { inputTokens: 120, outputTokens: 6 }),
    );
    const llm: LlmConfig = { provider: "openai-compatible", model: "llama3", baseURL: fixture.baseURL };
    const result = await runner(testAssignment({ llm }), {
      env: { KUBECREW_OPENAI_COMPATIBLE_API_KEY: "sk-very-secret" },
    });
    expect(result.code).toBe(0);
    expect(result.outcome).toMatchObject({
      output: "Agents are programs that act.",
      tokenUsage: { inputTokens: 120, outputTokens: 6, totalTokens: 126 },
      model: "openai-compatible/llama3",
    });
    expect(fixture.requests).toHaveLength(2);
    expect(fixture.requests[1]!.headers.authorization).toBe("Bearer sk-very-secret");
    expect(result.stdout).toContain("Transient LLM error, retrying");
    expect(result.stdout + result.stderr).not.toContain("sk-very-secret");
  });

  it("fails at once on a 400 from the provider, with its message on stderr", async () => {
    fixture.enqueue(httpError(400, "model 'nope' not found"));
    const llm: LlmConfig = { provider: "openai-compatible", model: "nope", baseURL: fixture.baseURL };
    const result = await runner(testAssignment({ llm }));
    expect(result.code).toBe(1);
    expect(fixture.requests).toHaveLength(1);
    expect(result.stderr).toBe("LLM call to openai-compatible/nope failed: HTTP 400: model 'nope' not found\n");
  });

  it("reports the attempt number the caller gives", async () => {
    const result = await runner(testAssignment({ llm: mock("mock") }), { env: { KUBECREW_TASK_ATTEMPT: "3" } });
    expect(result.outcome!.attempt).toBe(3);
  });

  it("writes an error outcome when stopped with SIGTERM", async () => {
    const result = await runner(testAssignment({ llm: mock("sleep-20000") }), {
      signalOnLog: { msg: "Task started", signal: "SIGTERM" },
    });
    expect(result.code).toBe(1);
    expect(result.outcome!.error).toBe("LLM call to mock/sleep-20000 failed: Task interrupted by SIGTERM");
    expect(result.outcome!.executionTime).toBeLessThan(5);
  });

  it("exits 1 without an outcome when the assignment is unreadable", async () => {
    const result = await runner("{ not json");
    expect(result.code).toBe(1);
    expect(result.outcome).toBeUndefined();
    expect(result.stderr).toMatch(/^Assignment .*assignment\.json is not JSON: .*\n$/);
    expect(result.stderr.split("\n")).toHaveLength(2);
  });

  it("names a bad setting and exits 1", async () => {
    const result = await runner(testAssignment(), { env: { KUBECREW_LLM_MAX_RETRIES: "lots" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^kubecrew runner: Invalid configuration: KUBECREW_LLM_MAX_RETRIES: /);
  });
});
