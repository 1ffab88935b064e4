import { APICallError } from "ai";
import { abortableSleep } from "./abortable-sleep.ts";
import { KubecrewError } from "../core/errors.ts";

/**
 * How the runner retries one LLM call. Transient errors (429, 408, 409, 5xx, request timeouts, connection resets) are
 * retried with exponential backoff and jitter, or after the provider's Retry-After; anything else fails at once.
 * The AI SDK's own retries are switched off (maxRetries 0): they have no jitter and a fixed first delay.
 */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Backoff before the first retry; doubles on each further one. */
  initialDelayMs: number;
  /** Ceiling of the backoff. */
  maxDelayMs: number;
  /** Longest Retry-After the runner waits for; a provider asking for more ends the task at once. */
  maxRetryAfterMs: number;
  /** Each attempt is aborted (and counts as transient) after this long. */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 4,
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  attemptTimeoutMs: 300_000,
};

export interface ErrorClass {
  transient: boolean;
  /** The wait the provider asked for (Retry-After / retry-after-ms), in milliseconds. */
  retryAfterMs?: number;
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function hasNetworkCode(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 5) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
  return hasNetworkCode(error.cause, depth + 1);
}

/** Milliseconds from `retry-after-ms`, or from `retry-after` (seconds or an HTTP date); undefined when absent. */
export function retryAfterMs(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number.parseFloat(lower["retry-after-ms"] ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = lower["retry-after"]?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function classifyLlmError(error: unknown): ErrorClass {
  if (APICallError.isInstance(error)) {
    return { transient: error.isRetryable, retryAfterMs: retryAfterMs(error.responseHeaders) };
  }
  if (error instanceof Error && error.name === "TimeoutError") return { transient: true };
  return { transient: hasNetworkCode(error) };
}

/** Exponential backoff with equal jitter: half the step is fixed, half random, so parallel runners spread out. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (retry - 1));
  return step / 2 + random() * (step / 2);
}

/** The last error of a call that failed for good, with how many attempts were made. */
export class LlmCallError extends KubecrewError {
  readonly code = "llm_call_failed";
  override name = "LlmCallError";
  readonly attempts: number;
  readonly transient: boolean;
  constructor(message: string, options: { cause: unknown; attempts: number; transient: boolean }) {
    super(message, { cause: options.cause });
    this.attempts = options.attempts;
    this.transient = options.transient;
  }
}

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  error: unknown;
}

export interface RetryOptions {
  policy: RetryPolicy;
  /** Stops the attempts and the waits between them (the runner's SIGTERM). */
  signal?: AbortSignal;
  onRetry?: (event: RetryEvent) => void;
  random?: () => number;
}

/** One line about an LLM error, for outcomes and logs: never the request body (the prompt) or headers. */
export function describeLlmError(error: unknown, policy: Pick<RetryPolicy, "attemptTimeoutMs">): string {
  if (error instanceof Error && error.name === "TimeoutError") {
    return `LLM request timed out after ${policy.attemptTimeoutMs / 1000} s`;
  }
  if (APICallError.isInstance(error) && error.statusCode !== undefined) {
    return `HTTP ${error.statusCode}: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `call` until it succeeds, a non-transient error occurs, or the retries are used up. Each attempt gets its own
 * signal, aborted after `attemptTimeoutMs` or when `signal` aborts. Failures end as an LlmCallError.
 */
export async function withRetry<T>(
  call: (attempt: { number: number; signal: AbortSignal }) => Promise<T>,
  options: RetryOptions,
): Promise<{ value: T; attempts: number }> {
  const { policy, signal } = options;
  for (let attempt = 1; ; attempt++) {
    const timeout = AbortSignal.timeout(policy.attemptTimeoutMs);
    const attemptSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      return { value: await call({ number: attempt, signal: attemptSignal }), attempts: attempt };
    } catch (error) {
      if (signal?.aborted) {
        throw new LlmCallError(describeLlmError(signal.reason, policy), {
          cause: error,
          attempts: attempt,
          transient: false,
        });
      }
      const { transient, retryAfterMs } = classifyLlmError(error);
      let message = describeLlmError(error, policy);
      if (transient && retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) {
        message += ` (the provider asked to retry after ${Math.ceil(retryAfterMs / 1000)} s, longer than the ${policy.maxRetryAfterMs / 1000} s the runner waits)`;
        throw new LlmCallError(message, { cause: error, attempts: attempt, transient });
      }
      if (!transient || attempt > policy.maxRetries) {
        if (transient) message += ` (after ${attempt} attempts)`;
        throw new LlmCallError(message, { cause: error, attempts: attempt, transient });
      }
      const delayMs = retryAfterMs ?? backoffDelayMs(attempt, policy, options.random);
      options.onRetry?.({ attempt, delayMs, error });
      try {
        await abortableSleep(delayMs, signal);
      } catch (reason) {
        throw new LlmCallError(describeLlmError(reason, policy), { cause: error, attempts: attempt, transient: false });
      }
    }
  }
}
