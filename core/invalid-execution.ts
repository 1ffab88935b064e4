import { z } from "zod";
import { setCondition } from "./conditions.ts";
import { condition } from "./crew.ts";
import { executionStatus, isFinished, type ExecutionStatus } from "./execution.ts";
import { truncate } from "./truncate.ts";

/** What an execution that does not decode comes to: its status, and the one Warning Event saying why. */
export interface InvalidExecutionDecision {
  status: ExecutionStatus;
  event: { eventType: "Warning"; reason: "InvalidSpec" | "InvalidStatus"; message: string };
}

const conditions = z.array(condition);

/**
 * An execution whose spec (or status) breaks the schema cannot run: it fails at once, naming what is wrong — phase
 * Failed, the problems as its error, Succeeded False (InvalidSpec, or InvalidStatus when only its status is wrong) —
 * and a Warning Event says the same. Once it is finished nothing more is decided, so both are said once.
 * `status` is the status as stored (it may be what does not decode); `problems` come from its cache's decoding.
 */
export function decideInvalidExecution(input: {
  status: unknown;
  problems: readonly string[];
  generation?: number;
  now: Date;
}): InvalidExecutionDecision | undefined {
  const stored = (input.status ?? {}) as { phase?: unknown; startTime?: unknown; conditions?: unknown };
  if (typeof stored.phase === "string" && isFinished(stored.phase as ExecutionStatus["phase"])) return undefined;
  const previous = executionStatus.safeParse(input.status ?? {});
  const kept: ExecutionStatus = previous.success ? previous.data : {};
  const prior = conditions.safeParse(stored.conditions);
  const reason = input.problems.some((p) => !p.startsWith("status")) ? "InvalidSpec" : "InvalidStatus";
  const message = truncate(`The CrewExecution is invalid: ${input.problems.join("; ")}`);
  const nowIso = input.now.toISOString();
  const startTime = typeof stored.startTime === "string" ? stored.startTime : nowIso;
  const generation = input.generation !== undefined ? { observedGeneration: input.generation } : {};
  const status: ExecutionStatus = {
    ...kept,
    phase: "Failed",
    startTime,
    completionTime: nowIso,
    executionTime: Math.round(Math.max(0, input.now.getTime() - Date.parse(startTime))) / 1000,
    error: message,
    ...generation,
    conditions: setCondition(
      prior.success ? prior.data : undefined,
      { type: "Succeeded", status: "False", reason, message, ...generation },
      nowIso,
    ),
  };
  delete status.currentTask;
  return { status, event: { eventType: "Warning", reason, message } };
}
