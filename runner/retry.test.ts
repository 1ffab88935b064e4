import { APICallError } from "ai";
import { describe, expect, it } from "vitest";
import {
  backoffDelayMs,
  classifyLlmError,
  DEFAULT_RETRY_POLICY,
  LlmCallError,
  retryAfterMs,
  withRetry,
  type RetryPolicy,
} from "./retry.ts";

const apiError = (statusCode: number | undefined, headers?: Record<string, string>, message = `status ${statusCode}`) =>
  new APICallError({
    message,
    url: "http://127.0.0.1/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    isRetryable: statusCode === undefined ? true : undefined,
  });

const fast: RetryPolicy = {
  maxRetries: 3,
  initialDelayMs: 1,
  maxDelayMs: 4,
  maxRetryAfterMs: 1_000,
  attemptTimeoutMs: 1_000,
};

describe("classifyLlmError", () => {
  it.each([408, 409, 429, 500, 502, 503, 504, 529])("retries HTTP %i", (status) => {
    expect(classifyLlmError(apiError(status)).transient).toBe(true);
  });

  it.each([400, 401, 403, 404, 413, 422])("does not retry HTTP %i", (status) => {
    expect(classifyLlmError(apiError(status)).transient).toBe(false);
  });

  it("retries connection failures and timeouts, not programming errors", () => {
    expect(classifyLlmError(apiError(undefined)).transient).toBe(true);
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(classifyLlmError(new TypeError("fetch failed", { cause: reset })).transient).toBe(true);
    expect(classifyLlmError(new DOMException("The operation timed out", "TimeoutError")).transient).toBe(true);
    expect(classifyLlmError(new Error("mock llm: failure requested")).transient).toBe(false);
  });

  it("reads the Retry-After of the response", () => {
    expect(classifyLlmError(apiError(429, { "retry-after": "3" })).retryAfterMs).toBe(3_000);
  });
});

describe("retryAfterMs", () => {
  it("reads seconds, HTTP dates and retry-after-ms", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs({ "retry-after": "2" })).toBe(2_000);
    expect(retryAfterMs({ "Retry-After": "0.5" })).toBe(500);
    expect(retryAfterMs({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" }, now)).toBe(7_000);
    expect(retryAfterMs({ "retry-after-ms": "250", "retry-after": "9" })).toBe(250);
    expect(retryAfterMs({ "retry-after": "soon" })).toBeUndefined();
    expect(retryAfterMs({})).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe("backoffDelayMs", () => {
  it("doubles from the initial delay up to the ceiling, with half of each step random", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, initialDelayMs: 1_000, maxDelayMs: 5_000 };
    expect(backoffDelayMs(1, policy, () => 0)).toBe(500);
    expect(backoffDelayMs(1, policy, () => 1)).toBe(1_000);
    expect(backoffDelayMs(2, policy, () => 1)).toBe(2_000);
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(3_000);
    expect(backoffDelayMs(10, policy, () => 1)).toBe(5_000);
  });
});

describe("withRetry", () => {
  it("retries transient errors until the call succeeds", async () => {
    const errors = [apiError(429), apiError(503)];
    const delays: number[] = [];
    const result = await withRetry(
      async ({ number }) => {
        const error = errors.shift();
        if (error) throw error;
        return `ok on ${number}`;
      },
      { policy: fast, onRetry: (e) => delays.push(e.delayMs), random: () => 1 },
    );
    expect(result).toEqual({ value: "ok on 3", attempts: 3 });
    expect(delays).toEqual([1, 2]);
  });

  it("waits what Retry-After asks instead of the backoff", async () => {
    const errors = [apiError(429, { "retry-after-ms": "120" })];
    const started = performance.now();
    const delays: number[] = [];
    await withRetry(
      async () => {
        const error = errors.shift();
        if (error) throw error;
        return "ok";
      },
      { policy: fast, onRetry: (e) => delays.push(e.delayMs) },
    );
    expect(delays).toEqual([120]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  it("fails at once on a non-transient error, with the provider's message", async () => {
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw apiError(400, undefined, "Invalid model name");
      },
      { policy: fast },
    );
    const error = await failing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ message: "HTTP 400: Invalid model name", attempts: 1, transient: false });
    expect(calls).toBe(1);
  });

  it("gives up after maxRetries and says how many attempts were made", async () => {
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw apiError(500, undefined, "Internal error");
      },
      { policy: fast },
    );
    await expect(failing).rejects.toThrow("HTTP 500: Internal error (after 4 attempts)");
    expect(calls).toBe(4);
  });

  it("does not wait for a Retry-After longer than the runner's limit", async () => {
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw apiError(429, { "retry-after": "3600" }, "Rate limited");
      },
      { policy: fast },
    );
    await expect(failing).rejects.toThrow(
      /Rate limited \(the provider asked to retry after 3600 s, longer than the 1 s/,
    );
    expect(calls).toBe(1);
  });

  it("aborts an attempt after attemptTimeoutMs and retries it", async () => {
    let calls = 0;
    const result = await withRetry(
      ({ signal }) => {
        calls++;
        if (calls > 1) return Promise.resolve("second try");
        return new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
      { policy: { ...fast, attemptTimeoutMs: 50 } },
    );
    expect(result).toEqual({ value: "second try", attempts: 2 });
  });

  it("stops retrying when the outer signal aborts", async () => {
    const stop = new AbortController();
    const failing = withRetry(
      async () => {
        setTimeout(() => stop.abort(new Error("Task interrupted by SIGTERM")), 5);
        throw apiError(503);
      },
      { policy: { ...fast, initialDelayMs: 10_000, maxDelayMs: 10_000 }, signal: stop.signal },
    );
    await expect(failing).rejects.toThrow("Task interrupted by SIGTERM");
  });
});
