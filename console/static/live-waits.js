// The waits of every running execution the signed-in person may see, kept live for "Waiting for you": each running
// execution's event stream says when it starts waiting (human_input_requested, tool_call_held), when someone decided
// (a step of kind decision) and when it ends, and only then is its status read again. The executions themselves are
// listed on opening, every RELIST_MS and when the window gets the focus, to find runs started since.
import { api, crewPath } from "./api.js";
import { useEffect, useState } from "./html.js";

/** How often the crews' executions are listed again, for runs started after the page opened. */
const RELIST_MS = 30_000;
/** At most this many executions are followed by their event stream at once (see useWaits). */
const MAX_STREAMS = 4;
/** How often an execution without a stream is read. */
const POLL_MS = 5_000;
/** The events after which an execution's waits may have changed. */
const WAIT_EVENTS = [
  "human_input_requested",
  "tool_call_held",
  "step",
  "task_completed",
  "task_failed",
  "execution_completed",
  "execution_failed",
];

/** The running executions of every crew the signed-in person may see. */
async function runningExecutions() {
  const { crews } = await api("/crews");
  const lists = await Promise.all(
    crews.map((crew) =>
      api(crewPath(crew.name, "/executions")).then(({ executions }) =>
        executions
          .filter((e) => e.status === "running")
          .map((e) => ({ crew: crew.name, id: e.kickoff_id, by: e.requested_by?.subject })),
      ),
    ),
  );
  return lists.flat();
}

/** An execution's waits as the page lists them: its pending answer and each held call. */
async function waitsOf({ crew, id, by }) {
  const status = await api(crewPath(crew, `/status/${encodeURIComponent(id)}`));
  if (status.status !== "running") return { running: false, items: [] };
  return {
    running: true,
    items: [
      ...(status.pending_human_input ? [{ crew, id, by, pending: status.pending_human_input }] : []),
      ...(status.pending_tool_calls ?? []).map((call) => ({ crew, id, by, call })),
    ],
  };
}

/**
 * The waits of every running execution, kept live. Each execution is followed by its event stream, whose wait events
 * read its status again (at most one read at a time per execution; one more after it when events came meanwhile). A
 * browser opens only 6 connections to one HTTP/1.1 server and a stream holds one, so at most MAX_STREAMS executions
 * are streamed at once; the others are read every POLL_MS until a stream is free (and so is one whose stream broke).
 */
export function useWaits() {
  const [waits, setWaits] = useState(undefined);
  const [problem, setProblem] = useState("");
  const [refresh, setRefresh] = useState(() => () => {});
  useEffect(() => {
    let stopped = false;
    const watched = new Map(); // kickoff id → { execution, source?, timer?, reading, again }
    const show = (id, items) =>
      !stopped &&
      setWaits((w) => {
        const next = { ...w };
        if (items.length) next[id] = items;
        else delete next[id];
        return next;
      });
    const unfollow = (w) => {
      w.source?.close();
      clearInterval(w.timer);
      w.source = w.timer = undefined;
    };
    const forget = (id) => {
      const w = watched.get(id);
      if (!w) return;
      const hadStream = Boolean(w.source);
      unfollow(w);
      watched.delete(id);
      show(id, []);
      // Its stream is free: the first execution read by polling gets it.
      const polled = hadStream && [...watched.values()].find((o) => o.timer);
      if (polled) follow(polled);
    };
    const read = async (id) => {
      const w = watched.get(id);
      if (!w || stopped) return;
      if (w.reading) {
        w.again = true;
        return;
      }
      w.reading = true;
      try {
        const { running, items } = await waitsOf(w.execution);
        if (!running) forget(id);
        else if (watched.has(id)) show(id, items);
      } catch (err) {
        if (err.status === 404) forget(id);
        else if (!stopped) setProblem(err.message);
      }
      w.reading = false;
      if (w.again) {
        w.again = false;
        read(id);
      }
    };
    const follow = (w) => {
      unfollow(w);
      const id = w.execution.id;
      const streams = [...watched.values()].filter((o) => o.source).length;
      if (streams >= MAX_STREAMS) {
        w.timer = setInterval(() => read(id), POLL_MS);
        return;
      }
      const source = new EventSource(crewPath(w.execution.crew, `/status/${encodeURIComponent(id)}/events`));
      w.source = source;
      for (const name of WAIT_EVENTS) {
        source.addEventListener(name, (event) => {
          if (name === "step" && JSON.parse(event.data).step?.kind !== "decision") return;
          read(id);
        });
      }
      // Closed by the server after the final event, or refused: read once more (that forgets a finished run), and
      // follow a run still going by polling.
      source.onerror = () => {
        if (source.readyState !== EventSource.CLOSED || w.source !== source) return;
        w.source = undefined;
        w.timer = setInterval(() => read(id), POLL_MS);
        read(id);
      };
    };
    const watch = (execution) => {
      const w = { execution, reading: false, again: false };
      watched.set(execution.id, w);
      follow(w);
      return read(execution.id);
    };
    // "Nothing waits" is said only once the executions listed first have been read.
    const relist = () =>
      runningExecutions()
        .then((running) => {
          if (stopped) return;
          setProblem("");
          return Promise.all(running.filter((e) => !watched.has(e.id)).map(watch));
        })
        .then(() => !stopped && setWaits((w) => w ?? {}))
        .catch((err) => !stopped && setProblem(err.message));
    relist();
    const timer = setInterval(relist, RELIST_MS);
    window.addEventListener("focus", relist);
    setRefresh(() => (id) => read(id));
    return () => {
      stopped = true;
      clearInterval(timer);
      window.removeEventListener("focus", relist);
      for (const w of watched.values()) unfollow(w);
    };
  }, []);
  return { items: waits && Object.values(waits).flat(), problem, refresh };
}
