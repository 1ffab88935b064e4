import { setTimeout as sleep } from "node:timers/promises";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { executionEventBody, knownEventNames, type ExecutionEventBody } from "../core/execution-event-bodies.ts";
import { ApiUnreachable, type CrewApiClient } from "./api-client.ts";
import { CommandFailure } from "./command-failure.ts";

/** Attempts in a row that bring no new event before the reader gives up on a dropped stream. */
const RECONNECTS = 5;

export interface ReadEventsOptions {
  /** Ends the reading quietly (Ctrl-C). */
  signal?: AbortSignal;
  /**
   * Stop once the stream has been quiet this long: the events so far of a running execution (the API sends every
   * event it has at once on connecting). Without it the reader follows the stream to the execution's end.
   */
  quietMs?: number;
}

/**
 * The events of an execution from `GET /status/{id}/events`, each checked against its schema, until the final one
 * (`execution_completed` or `execution_failed`). A dropped connection is resumed after the last event seen
 * (Last-Event-ID), as an EventSource would; events of kinds this CLI does not know (a newer API) are skipped.
 */
export async function* readExecutionEvents(
  client: CrewApiClient,
  crew: string | undefined,
  id: string,
  options: ReadEventsOptions = {},
): AsyncGenerator<ExecutionEventBody> {
  let lastEventId: string | undefined;
  let fruitless = 0;
  let lastProblem: string;
  while (!options.signal?.aborted) {
    const connection = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, connection.signal]) : connection.signal;
    let quiet: NodeJS.Timeout | undefined;
    const quietAgain = () => {
      if (options.quietMs === undefined) return;
      clearTimeout(quiet);
      quiet = setTimeout(() => connection.abort(), options.quietMs);
    };
    let progressed = false;
    try {
      const res = await client.openEvents(crew, id, lastEventId, signal);
      quietAgain();
      const messages = res
        .body!.pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream({ onComment: quietAgain, onRetry: quietAgain }));
      for await (const message of messages) {
        quietAgain();
        if (message.id) lastEventId = message.id;
        if (!message.event || !knownEventNames.includes(message.event)) continue;
        const body = parseEvent(client, message.data);
        progressed = true;
        yield body;
        if (body.event === "execution_completed" || body.event === "execution_failed") return;
      }
      lastProblem = "the stream ended before the execution did";
    } catch (err) {
      if (err instanceof CommandFailure && !(err instanceof ApiUnreachable)) throw err;
      if (signal.aborted) return; // Ctrl-C, or quiet for long enough
      lastProblem = err instanceof Error ? err.message : String(err);
    } finally {
      clearTimeout(quiet);
      connection.abort();
    }
    fruitless = progressed ? 0 : fruitless + 1;
    if (fruitless >= RECONNECTS) {
      throw new CommandFailure(`lost the event stream of ${id} at ${client.url}: ${lastProblem}`);
    }
    await sleep(Math.min(1000 * 2 ** fruitless, 10_000), undefined, { signal: options.signal }).catch(() => {});
  }
}

function parseEvent(client: CrewApiClient, data: string): ExecutionEventBody {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    json = undefined;
  }
  const parsed = executionEventBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CommandFailure(
      `unexpected event from ${client.url}: ${issue.path.join(".") || "(data)"}: ${issue.message}`,
    );
  }
  return json as ExecutionEventBody;
}
