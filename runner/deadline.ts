import { KubecrewError } from "../core/errors.ts";

/** An operation that did not finish within its time limit. */
export class DeadlineError extends KubecrewError {
  readonly code = "deadline_exceeded";
  override name = "DeadlineError";
}

/**
 * `work`, or a DeadlineError with `message` after `ms`, or the signal's reason when it aborts first. The work itself
 * is not cancelled here: callers close what it holds (an MCP session's transport) so nothing keeps running.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, message: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      done();
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      done();
      reject(new DeadlineError(message));
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}
