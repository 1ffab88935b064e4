import type { Crew } from "../../core/crew.ts";
import { isFinished } from "../../core/execution.ts";
import { statusResponse } from "../../core/status-view.ts";
import type { LlmPrices } from "../../core/usage.ts";
import type { ExecutionView } from "../execution-backend.ts";

/** The Content-Type of a `/status` answer (what express gives a JSON string). */
export const STATUS_CONTENT_TYPE = "application/json; charset=utf-8";

/** A `/status` answer serialised: the JSON text and its length in UTF-8 bytes. */
export interface StatusBody {
  json: string;
  bytes: number;
}

/**
 * `/status` answers are serialised once and polling clients get the cached text: a finished execution's per status
 * object (its answer never changes; the backend hands out the same object until the status is written again), any
 * other's per view (the Kubernetes backend hands out the same view until the execution or its results change) and
 * crew (whose task list a run not yet started reports). Kept as a string, not a Buffer: Node writes a string body in
 * one piece with the response head, a Buffer beside it (measured: about a third more CPU per answer).
 */
const statusBodies = new WeakMap<object, { crew: Crew; body: StatusBody }>();

/** The `/status` answer of an execution of `crew` (its usage priced with `prices`, the process's one table). */
export function statusBody(execution: ExecutionView, crew: Crew, prices?: LlmPrices): StatusBody {
  const finished = execution.status && isFinished(execution.status.phase) ? execution.status : undefined;
  const key = finished ?? execution;
  const cached = statusBodies.get(key);
  if (cached && (finished || cached.crew === crew)) return cached.body;
  const spec = execution.status?.crewSpec ?? crew.spec;
  const json = JSON.stringify(
    statusResponse(execution.status, execution.results, spec.tasks[0]!.name, spec.tasks.length, execution.spec, {
      crewSpec: spec,
      prices: prices ?? {},
      ...(execution.traceId ? { traceId: execution.traceId } : {}),
    }),
  );
  const body = { json, bytes: Buffer.byteLength(json) };
  statusBodies.set(key, { crew, body });
  return body;
}
