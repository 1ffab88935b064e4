import type { Request, Response } from "express";
import { executionEvents, FINAL_EVENTS, type ExecutionEvent } from "../../core/execution-events.ts";
import type { ExecutionView } from "../execution-backend.ts";

export interface EventStreamOptions {
  /** How often the execution is read again (the informer cache in a cluster, memory under `kubecrew dev`). */
  pollMs?: number;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  heartbeatMs?: number;
}

/** The id a reconnecting client saw last: the Last-Event-ID header (EventSource sends it), or `?lastEventId=`. */
function lastEventId(req: Request): number {
  const raw = req.get("last-event-id") ?? (typeof req.query.lastEventId === "string" ? req.query.lastEventId : "");
  const id = Number.parseInt(raw, 10);
  return Number.isFinite(id) && id > 0 ? id : 0;
}

function frame(e: ExecutionEvent): string {
  return `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify({ ...e.data, event: e.event })}\n\n`;
}

/**
 * `GET /status/{id}/events`: the execution's events (core/execution-events.ts) as Server-Sent Events, from the one
 * after `Last-Event-ID`, read again every `pollMs` until the final event has been sent; then the stream ends.
 * The caller has checked the token and that the execution is visible to it.
 */
export async function streamExecutionEvents(
  req: Request,
  res: Response,
  execution: ExecutionView,
  reload: () => Promise<ExecutionView | undefined>,
  options: EventStreamOptions = {},
): Promise<void> {
  const pollMs = options.pollMs ?? 250;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  res.status(200);
  res.set({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  res.write("retry: 2000\n\n");
  let closed = false;
  req.on("close", () => (closed = true));
  let sent = lastEventId(req);
  let lastWrite = Date.now();
  let view: ExecutionView | undefined = execution;
  while (!closed && view) {
    const all = executionEvents(view.id, view.status, view.results);
    for (const e of all.filter((e) => e.id > sent)) {
      res.write(frame(e));
      sent = e.id;
      lastWrite = Date.now();
    }
    if (all.some((e) => FINAL_EVENTS.includes(e.event)) && sent >= all.length) break;
    if (Date.now() - lastWrite >= heartbeatMs) {
      res.write(": heartbeat\n\n");
      lastWrite = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    if (closed) break;
    view = await reload();
  }
  res.end();
}
