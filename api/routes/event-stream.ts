import type { Request, Response } from "express";
import { parseEventId, type EventCursor } from "../../core/event-cursor.ts";
import {
  eventsAfter,
  executionEventLog,
  FINAL_EVENTS,
  type ExecutionEvent,
  type ExecutionEventLog,
} from "../../core/execution-events.ts";
import type { LlmPrices } from "../../core/usage.ts";
import type { ExecutionView } from "../execution-backend.ts";

export interface EventStreamOptions {
  /** How often the execution is read again when the backend does not tell of changes (`kubecrew dev`). */
  pollMs?: number;
  /** When it does (the informers in a cluster): read again on each change, and at the latest after this long. */
  pushedPollMs?: number;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  heartbeatMs?: number;
  /** Prices of the models, for the final event's `usage.cost_usd` (KUBECREW_LLM_PRICES). */
  prices?: LlmPrices;
}

/** The id a reconnecting client saw last: the Last-Event-ID header (EventSource sends it), or `?lastEventId=`. */
function lastEventId(req: Request): string | undefined {
  return req.get("last-event-id") ?? (typeof req.query.lastEventId === "string" ? req.query.lastEventId : undefined);
}

/** An event's data line, written once per event of a view however many clients read it; its id is the client's. */
const dataLines = new WeakMap<object, string>();
function frame(e: ExecutionEvent): string {
  let data = dataLines.get(e.data);
  if (data === undefined) {
    data = JSON.stringify({ ...e.data, event: e.event });
    dataLines.set(e.data, data);
  }
  return `id: ${e.id}\nevent: ${e.event}\ndata: ${data}\n\n`;
}

/**
 * The event log of a view, derived once per view object: a backend that hands out the same view while nothing
 * changed (the Kubernetes backend) lets many clients of one execution share the work.
 */
const derived = new WeakMap<ExecutionView, { log: ExecutionEventLog; final: boolean }>();
function eventsOf(view: ExecutionView, prices?: LlmPrices) {
  let d = derived.get(view);
  if (!d) {
    const log = executionEventLog(view.id, view.status, view.results, prices, view.spec.decisions);
    d = { log, final: log.execution.some((e) => FINAL_EVENTS.includes(e.event)) };
    derived.set(view, d);
  }
  return d;
}

const sameCursor = (a: EventCursor, b: EventCursor) =>
  a.execution === b.execution && a.tasks.every((seen, i) => seen === b.tasks[i]);

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
  let view: ExecutionView | undefined = execution;
  let sent = parseEventId(lastEventId(req), eventsOf(view, options.prices).log.shape);
  let lastWrite = Date.now();
  try {
    while (!closed && view) {
      const { log, final } = eventsOf(view, options.prices);
      const next = eventsAfter(log, sent);
      if (!sameCursor(next.cursor, sent)) {
        res.write(next.events.map(frame).join(""));
        sent = next.cursor;
        lastWrite = Date.now();
      }
      if (final) break;
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
