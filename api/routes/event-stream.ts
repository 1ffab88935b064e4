import type { Request, Response } from "express";
import { executionEvents, FINAL_EVENTS, type ExecutionEvent } from "../../core/execution-events.ts";
import type { ExecutionView } from "../execution-backend.ts";

export interface EventStreamOptions {
  /** How often the execution is read again when the backend does not tell of changes (`kubecrew dev`). */
  pollMs?: number;
  /** When it does (the informers in a cluster): read again on each change, and at the latest after this long. */
  pushedPollMs?: number;
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
 * The events and their frames of a view, derived once per view object: a backend that hands out the same view while
 * nothing changed (the Kubernetes backend) lets many clients of one execution share the work.
 */
const derived = new WeakMap<ExecutionView, { events: ExecutionEvent[]; frames: string[]; final: boolean }>();
function eventsOf(view: ExecutionView) {
  let d = derived.get(view);
  if (!d) {
    const events = executionEvents(view.id, view.status, view.results);
    d = {
      events,
      frames: events.map(frame),
      final: events.some((e) => FINAL_EVENTS.includes(e.event)),
    };
    derived.set(view, d);
  }
  return d;
}

/** A wait that ends after `ms` or at the first `wake()` since the last wait, whichever comes first. */
class Wakeup {
  private pending = false;
  private resolve: (() => void) | undefined;

  wake(): void {
    if (this.resolve) this.resolve();
    else this.pending = true;
  }

  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.resolve = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.resolve = done;
    });
  }
}

/**
 * `GET /status/{id}/events`: the execution's events (core/execution-events.ts) as Server-Sent Events, from the one
 * after `Last-Event-ID`, read again on each change `subscribe` tells of (at the latest every `pushedPollMs`), or every
 * `pollMs` without it, until the final event has been sent; then the stream ends. The caller has checked the token and
 * that the execution is visible to it.
 */
export async function streamExecutionEvents(
  req: Request,
  res: Response,
  execution: ExecutionView,
  reload: () => Promise<ExecutionView | undefined>,
  options: EventStreamOptions = {},
  subscribe?: (onChange: () => void) => () => void,
): Promise<void> {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const pollMs = subscribe ? (options.pushedPollMs ?? Math.min(heartbeatMs, 5_000)) : (options.pollMs ?? 250);
  const wakeup = new Wakeup();
  // Subscribed before the first read: a change between the read and the wait still wakes it.
  const unsubscribe = subscribe?.(() => wakeup.wake());
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
  req.on("close", () => {
    closed = true;
    wakeup.wake();
  });
  let sent = lastEventId(req);
  let lastWrite = Date.now();
  let view: ExecutionView | undefined = execution;
  try {
    while (!closed && view) {
      const { events, frames, final } = eventsOf(view);
      if (events.length > sent) {
        res.write(frames.slice(sent).join(""));
        sent = events.length;
        lastWrite = Date.now();
      }
      if (final && sent >= events.length) break;
      if (Date.now() - lastWrite >= heartbeatMs) {
        res.write(": heartbeat\n\n");
        lastWrite = Date.now();
      }
      await wakeup.wait(Math.max(0, Math.min(pollMs, heartbeatMs - (Date.now() - lastWrite))));
      if (closed) break;
      view = await reload();
    }
  } finally {
    unsubscribe?.();
  }
  res.end();
}
