import { isFinished, type ExecutionStatus } from "./execution.ts";

/**
 * When the children of a finished execution (its task runs and their inputs; results stay) are due for removal:
 * undefined for never (not finished, kept for good, or nothing left), 0 for now, else the milliseconds until then.
 */
export function cleanupDueInMs(o: {
  status: ExecutionStatus | undefined;
  /** Seconds after the execution finished; negative keeps the children. */
  ttlSeconds: number;
  childrenLeft: boolean;
  now: Date;
}): number | undefined {
  if (!isFinished(o.status?.phase) || o.ttlSeconds < 0 || !o.childrenLeft) return undefined;
  const finishedAt = Date.parse(o.status?.completionTime ?? "") || o.now.getTime();
  return Math.max(0, finishedAt + o.ttlSeconds * 1000 - o.now.getTime());
}
