import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import { MAX_TASK_OUTPUT_BYTES } from "../../../core/task-assignment.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../../../runner/retry.ts";
import { runTask } from "../../../runner/run-task.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { answer, httpError, reset, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";

// Transient LLM errors are retried with backoff (or after Retry-After); others fail at once. Real providers over HTTP.
let fixture: LlmFixture;
beforeAll(async () => {
  fixture = await startLlmFixture();
});
afterAll(() => fixture.stop());
beforeEach(() => {
  fixture.requests.length = 0;
});

const { fetch } = createOutboundClient(localPolicy);
const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetries: 3, initialDelayMs: 20, maxDelayMs: 80 };

const run = (provider: LlmConfig["provider"], policy: RetryPolicy = retry) =>
  runTask(testAssignment({ llm: { provider, model: "test-model", baseURL: fixture.baseURL, maxOutputTokens: 500 } }), {
    env: { OPENAI_API_KEY: "k", ANTHROPIC_API_KEY: "k", KUBECREW_OPENAI_COMPATIBLE_API_KEY: "k" },
    retry: policy,
    fetch,
  });

describe.each(["openai", "openai-compatible", "anthropic"] as const)("provider %s", (provider) => {
  it("waits the Retry-After of a 429, then succeeds", async () => {
    fixture.enqueue(httpError(429, "Rate limit reached", { "retry-after": "1" }), answer("after the limit"));
    const started = performance.now();
    const outcome = await run(provider);
    const waited = performance.now() - started;
    expect(outcome.output).toBe("after the limit");
    expect(outcome.error).toBeUndefined();
    expect(fixture.requests).toHaveLength(2);
    expect(waited).toBeGreaterThanOrEqual(990);
    expect(waited).toBeLessThan(3_000);
    expect(outcome.executionTime).toBeGreaterThanOrEqual(0.99);
  });

  it("backs off after a 500, then succeeds", async () => {
    fixture.enqueue(httpError(500, "The server had an error"), answer("after the error"));
    const started = performance.now();
    const outcome = await run(provider);
    expect(outcome.output).toBe("after the error");
    expect(fixture.requests).toHaveLength(2);
    // First backoff: between half and all of initialDelayMs.
    expect(performance.now() - started).toBeGreaterThanOrEqual(10);
  });

  it("fails at once on a 400 with the provider's message", async () => {
    fixture.enqueue(httpError(400, "The model `test-model` does not exist"));
    const outcome = await run(provider);
    expect(fixture.requests).toHaveLength(1);
    expect(outcome.output).toBeUndefined();
    expect(outcome.error).toBe(
      `LLM call to ${provider}/test-model failed: HTTP 400: The model \`test-model\` does not exist`,
    );
  });

  it("gives up after the last retry of a failing server, saying how often it tried", async () => {
    fixture.enqueue(...Array.from({ length: 4 }, () => httpError(503, "Overloaded")));
    const outcome = await run(provider);
    expect(fixture.requests).toHaveLength(4);
    expect(outcome.error).toBe(`LLM call to ${provider}/test-model failed: HTTP 503: Overloaded (after 4 attempts)`);
  });
});

describe("network trouble (openai-compatible)", () => {
  it("retries a reset connection", async () => {
    fixture.enqueue(reset(), answer("after the reset"));
    const outcome = await run("openai-compatible");
    expect(outcome.output).toBe("after the reset");
    expect(fixture.requests).toHaveLength(2);
  });

  it("retries a request that times out", async () => {
    fixture.enqueue(answer("too late", undefined, 2_000), answer("in time"));
    const started = performance.now();
    const outcome = await run("openai-compatible", { ...retry, attemptTimeoutMs: 300 });
    expect(outcome.output).toBe("in time");
    expect(fixture.requests).toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it("names a gateway's non-JSON error page by its status", async () => {
    const page = { kind: "raw" as const, status: 502, body: "<html>\n<body>Bad gateway</body>\n</html>" };
    fixture.enqueue(...Array.from({ length: 4 }, () => ({ ...page, headers: { "content-type": "text/html" } })));
    const outcome = await run("openai-compatible");
    expect(fixture.requests).toHaveLength(4);
    expect(outcome.error).toBe(
      "LLM call to openai-compatible/test-model failed: HTTP 502: Bad Gateway (after 4 attempts)",
    );
  });

  it("does not wait for a Retry-After beyond the runner's limit", async () => {
    fixture.enqueue(httpError(429, "Quota exhausted", { "retry-after": "3600" }));
    const outcome = await run("openai-compatible");
    expect(fixture.requests).toHaveLength(1);
    expect(outcome.error).toBe(
      "LLM call to openai-compatible/test-model failed: HTTP 429: Quota exhausted " +
        "(the provider asked to retry after 3600 s, longer than the 60 s the runner waits)",
    );
  });
});

describe("the 1 MiB output limit (openai-compatible)", () => {
  it("fails a larger answer instead of truncating it, and keeps one of exactly 1 MiB", async () => {
    fixture.enqueue(answer("é".repeat(MAX_TASK_OUTPUT_BYTES / 2), { inputTokens: 5, outputTokens: 7 }));
    const fits = await run("openai-compatible");
    expect(fits.error).toBeUndefined();
    expect(Buffer.byteLength(fits.output!)).toBe(MAX_TASK_OUTPUT_BYTES);

    fixture.enqueue(answer("x".repeat(MAX_TASK_OUTPUT_BYTES + 10), { inputTokens: 5, outputTokens: 7 }));
    const tooBig = await run("openai-compatible");
    expect(tooBig.output).toBeUndefined();
    expect(tooBig.error).toBe("Task output is 1048586 bytes, above the 1 MiB limit");
    expect(tooBig.tokenUsage).toEqual({ inputTokens: 5, outputTokens: 7, totalTokens: 12 });
  });
});
