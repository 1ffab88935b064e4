/**
 * Where a reader of an execution's events is: how many events of each task, and of the execution's own, it has had.
 * Each task's events only grow (core/execution-events.ts), but tasks that run at once grow side by side, so one
 * position in one list cannot say what a reader has seen. The cursor can, and an event's id is the cursor once the
 * reader has it: `Last-Event-ID` gives it back and the stream goes on from there, whichever replica answers.
 *
 * An id is written as a plain position (1, 2, …) while the events a reader has are a prefix of the tasks in order —
 * every earlier task finished with all its events, no later task's yet — which is always so for a crew whose tasks
 * run one after another; otherwise as the counts, `a.b.c~e` (one per task, then the execution's own).
 */
export interface EventCursor {
  tasks: number[];
  execution: number;
}

/** The lengths the cursor is read against: each task's events so far, whether more can come, the execution's own. */
export interface EventLogShape {
  taskCounts: readonly number[];
  taskClosed: readonly boolean[];
  executionCount: number;
}

export function startCursor(shape: EventLogShape): EventCursor {
  return { tasks: shape.taskCounts.map(() => 0), execution: 0 };
}

export function eventId(cursor: EventCursor, shape: EventLogShape): string {
  const open = cursor.tasks.findIndex((seen, i) => !(shape.taskClosed[i] && seen === shape.taskCounts[i]));
  const prefix = open === -1 || (cursor.execution === 0 && cursor.tasks.slice(open + 1).every((seen) => seen === 0));
  if (prefix) return String(cursor.tasks.reduce((sum, seen) => sum + seen, cursor.execution));
  return `${cursor.tasks.join(".")}~${cursor.execution}`;
}

/**
 * The cursor an id stands for; an id that is neither form (or names more tasks than there are) starts from the
 * beginning, as no id does. A position fills the tasks in order, as the events were listed when it was given.
 */
export function parseEventId(raw: string | undefined, shape: EventLogShape): EventCursor {
  const cursor = startCursor(shape);
  if (!raw) return cursor;
  if (/^\d{1,9}$/.test(raw)) {
    let left = Number(raw);
    cursor.tasks = shape.taskCounts.map((count) => {
      const seen = Math.min(count, left);
      left -= seen;
      return seen;
    });
    cursor.execution = Math.min(shape.executionCount, left);
    return cursor;
  }
  const match = /^(\d{1,9}(?:\.\d{1,9})*)~(\d{1,9})$/.exec(raw);
  if (!match) return cursor;
  const tasks = match[1]!.split(".").map(Number);
  if (tasks.length > shape.taskCounts.length) return cursor;
  cursor.tasks = shape.taskCounts.map((_, i) => tasks[i] ?? 0);
  cursor.execution = Number(match[2]);
  return cursor;
}
