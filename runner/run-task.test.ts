import { describe, expect, it } from "vitest";
import { MAX_TASK_OUTPUT_BYTES } from "../core/task-assignment.ts";
import { buildTaskPrompt } from "./prompt.ts";
import { DEFAULT_RETRY_POLICY } from "./retry.ts";
import { runTask } from "./run-task.ts";
import { testAssignment } from "./test-assignment.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../core/outbound/policy.ts";

const deps = {
  env: {},
  fetch: createOutboundClient(localPolicy).fetch,
  retry: { ...DEFAULT_RETRY_POLICY, initialDelayMs: 1, maxDelayMs: 2 },
};

describe("runTask (mock provider)", () => {
  it("returns the output, the agent's role, time, tokens and model", async () => {
    const outcome = await runTask(testAssignment(), { ...deps, attempt: 2 });
    expect(outcome).toMatchObject({
      taskName: "write",
      taskIndex: 1,
      agent: "Senior Writer",
      model: "mock/mock",
      attempt: 2,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.output).toMatch(/^\[mock llm\] Answer to task "write"/);
    expect(outcome.tokenUsage.inputTokens).toBeGreaterThan(40);
    expect(outcome.tokenUsage.totalTokens).toBe(outcome.tokenUsage.inputTokens + outcome.tokenUsage.outputTokens);
    expect(typeof outcome.executionTime).toBe("number");
  });

  it("reports each LLM turn and tool call as a step, with the tools used", async () => {
    const steps: unknown[] = [];
    const a = testAssignment({ llm: { provider: "mock", model: "call-tools" } });
    const outcome = await runTask(
      { ...a, agent: { ...a.agent, tools: ["http_request"] }, tools: { mcpServers: [], allowedHosts: [] } },
      { ...deps, onStep: (s) => steps.push(s) },
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.stepCount).toBe(3);
    expect(outcome.toolsUsed).toEqual(["http_request"]);
    expect(outcome.steps).toEqual(steps);
    expect(outcome.steps!.map((s) => [s.index, s.kind, s.tool])).toEqual([
      [0, "llm", undefined],
      [1, "tool", "http_request"],
      [2, "llm", undefined],
    ]);
    const [call, tool, answer] = outcome.steps!;
    expect(call!.output).toBe("calls: http_request");
    expect(call!.tokenUsage!.inputTokens).toBeGreaterThan(0);
    expect(tool).toMatchObject({
      input: '{"method":"GET","url":"x"}',
      output: 'Tool error: "x" is not an absolute URL',
      error: '"x" is not an absolute URL',
    });
    expect(answer!.output).toContain("Tool http_request returned:");
    for (const s of outcome.steps!) {
      expect(Date.parse(s.startedAt)).not.toBeNaN();
      expect(s.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it("reports a failed LLM turn as a step with its error", async () => {
    const outcome = await runTask(testAssignment({ llm: { provider: "mock", model: "fail" } }), deps);
    expect(outcome.steps).toEqual([
      expect.objectContaining({ index: 0, kind: "llm", error: "mock llm: failure requested" }),
    ]);
    expect(outcome.stepCount).toBe(1);
    expect(outcome.toolsUsed).toEqual([]);
  });

  it("passes the whole prompt to the model", async () => {
    const assignment = testAssignment({ llm: { provider: "mock", model: "echo" } });
    const outcome = await runTask(assignment, deps);
    const { system, user } = buildTaskPrompt(assignment);
    expect(outcome.output).toBe(`${system}\n\n${user}`);
  });

  it("measures the execution time in seconds", async () => {
    const outcome = await runTask(testAssignment({ llm: { provider: "mock", model: "sleep-300" } }), deps);
    expect(outcome.executionTime).toBeGreaterThanOrEqual(0.29);
    expect(outcome.executionTime).toBeLessThan(5);
  });

  it("returns an error outcome instead of throwing when the LLM fails", async () => {
    const outcome = await runTask(testAssignment({ llm: { provider: "mock", model: "fail" } }), deps);
    expect(outcome.output).toBeUndefined();
    expect(outcome.error).toBe("LLM call to mock/fail failed: mock llm: failure requested");
    expect(outcome.agent).toBe("Senior Writer");
  });

  it("accepts an output of exactly 1 MiB and fails a larger one instead of truncating it", async () => {
    const fits = await runTask(
      testAssignment({ llm: { provider: "mock", model: `size-${MAX_TASK_OUTPUT_BYTES}` } }),
      deps,
    );
    expect(fits.error).toBeUndefined();
    expect(Buffer.byteLength(fits.output!)).toBe(MAX_TASK_OUTPUT_BYTES);
    const tooBig = await runTask(
      testAssignment({ llm: { provider: "mock", model: `size-${MAX_TASK_OUTPUT_BYTES + 1}` } }),
      deps,
    );
    expect(tooBig.output).toBeUndefined();
    expect(tooBig.error).toBe("Task output is 1048577 bytes, above the 1 MiB limit");
    expect(tooBig.tokenUsage.outputTokens).toBeGreaterThan(0);
  });

  it("fails clearly when the agent has no LLM or no API key", async () => {
    const noLlm = await runTask(testAssignment({ llm: null }), deps);
    expect(noLlm.error).toBe("Agent \"writer\" has no LLM configured (set the crew's llm or the agent's llm)");
    const noKey = await runTask(testAssignment({ llm: { provider: "anthropic", model: "claude-x" } }), deps);
    expect(noKey.error).toBe(
      "LLM call to anthropic/claude-x failed: No API key for the anthropic provider: set one of KUBECREW_LLM_API_KEY, ANTHROPIC_API_KEY",
    );
  });

  it("stops when its signal aborts", async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("Task interrupted by SIGTERM")), 50);
    const outcome = await runTask(testAssignment({ llm: { provider: "mock", model: "sleep-10000" } }), {
      ...deps,
      signal: stop.signal,
    });
    expect(outcome.error).toBe("LLM call to mock/sleep-10000 failed: Task interrupted by SIGTERM");
    expect(outcome.executionTime).toBeLessThan(5);
  });

  it("retries a timed-out attempt", async () => {
    const outcome = await runTask(testAssignment({ llm: { provider: "mock", model: "sleep-10000" } }), {
      ...deps,
      retry: { ...deps.retry, maxRetries: 1, attemptTimeoutMs: 100 },
    });
    expect(outcome.error).toBe(
      "LLM call to mock/sleep-10000 failed: LLM request timed out after 0.1 s (after 2 attempts)",
    );
    expect(outcome.executionTime).toBeGreaterThanOrEqual(0.19);
  });
});

describe("runTask with structured output and guardrails (mock provider, offline)", () => {
  it("answers outputJson with an object from the schema and passes every guardrail, each check a step", async () => {
    const a = testAssignment();
    const outputJson = { type: "object", properties: { title: { type: "string", minLength: 2 } }, required: ["title"] };
    const outcome = await runTask(
      {
        ...a,
        task: {
          ...a.task,
          outputJson,
          guardrail: "The title is catchy.",
          guardrails: [{ maxLength: 100 }, { regex: "title" }],
        },
      },
      deps,
    );
    expect(outcome.error).toBeUndefined();
    expect(outcome.jsonDict).toEqual({ title: "xx" });
    expect(outcome.output).toBe('{"title":"xx"}');
    expect(outcome.steps!.map((s) => [s.kind, s.input, s.output])).toEqual([
      ["llm", undefined, '{"title":"xx"}'],
      ["guardrail", "outputJson", "passed"],
      ["guardrail", "maxLength 100", "passed"],
      ["guardrail", "regex title", "passed"],
      ["llm", undefined, '{"valid":true,"feedback":""}'],
      ["guardrail", "llm: The title is catchy.", "passed"],
    ]);
  });

  it("fails a plain mock answer that a built-in check refuses, after the retries", async () => {
    const a = testAssignment();
    const outcome = await runTask(
      { ...a, task: { ...a.task, guardrails: [{ maxLength: 10 }], guardrailMaxRetries: 1 } },
      deps,
    );
    expect(outcome.error).toMatch(
      /^The answer failed guardrails\[0\] \(maxLength 10\) after 1 retry: the answer has \d+ characters, more than 10$/,
    );
    expect(outcome.steps!.map((s) => s.kind)).toEqual(["llm", "guardrail", "llm", "guardrail"]);
  });
});
