/**
 * The roots of kubecrew's own errors. Each has a stable `code` (what a caller or a log search relies on, whatever the
 * message says); the one HTTP error mapper (platform/http/error-mapper.ts) answers by class: an HttpError as it is, a
 * DependencyUnavailable as 503 with Retry-After, anything else as a logged 500.
 */

/** An error of kubecrew's own: its `code` names the kind of failure and does not change with the wording. */
export abstract class KubecrewError extends Error {
  abstract readonly code: string;
}

/**
 * Something kubecrew depends on (the token store, the integrations service, Redis) cannot be reached or did not answer
 * in time: not the caller's fault, and trying again later may succeed. `message` says what happened, for logs;
 * `answer` is what a caller is told, without internals.
 */
export class DependencyUnavailable extends KubecrewError {
  override name = "DependencyUnavailable";
  readonly code = "dependency_unavailable";
  /** What is unavailable, e.g. "token store". */
  readonly dependency: string;
  /** What an HTTP caller is told (the 503's message). */
  readonly answer: string;
  /** When to try again (the 503's Retry-After). */
  readonly retryAfterSeconds: number;

  constructor(
    dependency: string,
    message: string,
    options: { answer?: string; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.dependency = dependency;
    this.answer = options.answer ?? `The ${dependency} is unavailable; try again shortly`;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
  }
}
