import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statusResponse, type StatusResponse } from "../../../core/api-bodies.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { cli, cliOnTerminal, outputMatching, startCli } from "./support.ts";

// `kubecrew run --watch` against a real `kubecrew dev` (mock LLM, tasks as local processes), the CLI as a child process
// as a user runs it: each task and step as it happens, the output, and an exit status that says how the run ended.
describe("kubecrew run --watch", { timeout: 60_000 }, () => {
  let dev: RunningDev;
  let env: Record<string, string>;

  beforeAll(async () => {
    dev = await startTestDev({
      "failing.yaml": crewYaml("failing", "fail", { tasks: 2 }),
      "slow.yaml": crewYaml("slow", "sleep-1500", { tasks: 2 }),
      "echo.yaml": crewYaml("echo", "echo", { tasks: 1 }),
    });
    env = { KUBECREW_URL: dev.url, KUBECREW_TOKEN: tokens.org };
  });
  afterAll(() => dev?.stop());

  const apiStatus = async (crew: string, id: string): Promise<StatusResponse> => {
    const res = await fetch(`${dev.url}/crews/${crew}/status/${id}`, {
      headers: { authorization: `Bearer ${tokens.org}` },
    });
    return statusResponse.parse(await res.json());
  };
  const kickoffId = (stdout: string) => /^Run ([0-9a-f-]{36}) of /m.exec(stdout)?.[1];

  it("shows each task and its steps, ends with the run's output and exits 0; no escape codes off a terminal", async () => {
    const run = await cli(["run", "research", "-i", "topic=tides", "--watch"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const id = kickoffId(run.stdout)!;
    const status = await apiStatus("research", id);
    if (status.status !== "completed") throw new Error(`expected completed, got ${status.status}`);
    // Tasks in order, each with its step and its end, then the verdict and the final output as the API has it.
    const lines = run.stdout.trimEnd().split("\n");
    const order = ["▶ research", "✓ research", "▶ analysis", "✓ analysis", "▶ report", "✓ report", "✓ completed in"];
    const at = order.map((start) => lines.findIndex((line) => line.startsWith(start)));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(lines.filter((line) => line.trim().startsWith("LLM turn"))).toHaveLength(3);
    expect(run.stdout.trimEnd().endsWith(status.result.output)).toBe(true);
    expect(status.result.output).toContain("tides"); // the -i input reached the crew
    expect(run.stdout).not.toContain("\u001b");
  });

  it("prints agents' texts without their control characters: an output cannot drive the terminal", async () => {
    const hostile = "\u001b[2J\u001b]0;owned\u0007tides\u009b31m";
    const run = await cli(["run", "echo", "-i", `topic=${hostile}`, "--watch"], env);
    expect(run.code).toBe(0);
    const status = await apiStatus("echo", kickoffId(run.stdout)!);
    if (status.status !== "completed") throw new Error(`expected completed, got ${status.status}`);
    expect(status.result.output).toContain(hostile); // the agent's output has them (the echo model repeats its prompt)
    expect(run.stdout).toContain("[2J]0;ownedtides31m");
    const control = [...run.stdout].filter((c) => /\p{Cc}/u.test(c) && c !== "\n" && c !== "\t");
    expect(control).toEqual([]);
  });

  it("exits 1 when the run fails, with the error on stderr in one line", async () => {
    const run = await cli(["run", "failing", "-i", "topic=tides", "--watch"], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^✗ step1: Task "step1" failed: .*mock llm: failure requested$/m);
    expect(run.stdout).toMatch(/^✗ failed after /m);
    expect(run.stderr).toMatch(/^kubecrew run: Task "step1" failed: .*mock llm: failure requested\n$/);
  });

  it("exits 3 when the run is stopped (kubecrew stop) while it is watched", async () => {
    const watching = startCli(["run", "slow", "-i", "topic=tides", "--watch"], env);
    await outputMatching(watching.stdout, /^▶ step1$/m);
    const id = kickoffId(watching.stdout())!;
    const stop = await cli(["stop", id], env);
    expect(stop).toMatchObject({ code: 0, stdout: `Stopping ${id} (crew slow)\n`, stderr: "" });
    const watched = await watching.exited;
    expect(watched.code).toBe(3);
    expect(watched.stdout).toMatch(/^■ stopped after /m);
    expect(watched.stderr).toBe("kubecrew run: the run was stopped\n");
  });

  it("on Ctrl-C stops watching only: exit 130, says how to stop the run, and the run completes", async () => {
    const watching = startCli(["run", "slow", "-i", "topic=tides", "--watch"], env);
    await outputMatching(watching.stdout, /^▶ step1$/m);
    const id = kickoffId(watching.stdout())!;
    watching.child.kill("SIGINT");
    const watched = await watching.exited;
    expect(watched.code).toBe(130);
    expect(watched.stderr).toContain(`kubecrew stop ${id} --crew slow`);
    const end = await waitFor(async () => {
      const status = await apiStatus("slow", id);
      return status.status === "running" ? undefined : status;
    });
    expect(end.status).toBe("completed");
  });

  it("on a terminal, colours and a live progress line; NO_COLOR leaves the colours out", async () => {
    const run = await cliOnTerminal(["run", "research", "-i", "topic=tides", "--watch"], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("\u001b[32m✓ research"); // green
    expect(run.stdout).toContain("\r\u001b[2K"); // the live line, redrawn in place
    expect(run.stdout).toMatch(/tasks done/);
    const plain = await cliOnTerminal(["run", "research", "-i", "topic=tides", "--watch"], { ...env, NO_COLOR: "1" });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("✓ research");
    expect(plain.stdout).not.toContain("\u001b[32m");
    expect(plain.stdout).toContain("\r\u001b[2K"); // still a live line: NO_COLOR is about colour
  }, 90_000);
});
