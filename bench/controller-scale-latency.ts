/**
 * bench/controller-scale: where the time from a result's creation to the execution's status goes, per task, in epoch
 * ms: the result created (the stand-in's create answered), its watch event at the observer, the controller's decision
 * (the task's completionTime, its reconcile's clock), the status at the observer and at the bench's main thread.
 * Printed in quarters of kickoff order and of time, and as parts, so a tail shows where and when it happened.
 */
import { percentile } from "./controller-support.ts";

export interface TaskTimes {
  /** `<execution>/<task index>`. */
  key: string;
  /** The task's execution's place in the kickoff order (0 first). */
  order: number;
  created: number;
  resultSeen?: number;
  decided?: number;
  statusSeen?: number;
  benchSeen?: number;
}

/** Quarters of `tasks` by `by` (kickoff order, or the time the result was created). */
export function quarters<T>(tasks: T[], by: (t: T) => number): T[][] {
  const sorted = [...tasks].sort((a, b) => by(a) - by(b));
  return [0, 1, 2, 3].map((q) =>
    sorted.slice(Math.floor((q * sorted.length) / 4), Math.floor(((q + 1) * sorted.length) / 4)),
  );
}

/** The parts of one task's time, each in ms (undefined where a time is missing). */
export const parts = {
  observer: (t: TaskTimes) => sub(t.statusSeen, t.created),
  mainThread: (t: TaskTimes) => sub(t.benchSeen, t.created),
  resultAtObserver: (t: TaskTimes) => sub(t.resultSeen, t.created),
  toDecision: (t: TaskTimes) => sub(t.decided, t.created),
  decisionToObserver: (t: TaskTimes) => sub(t.statusSeen, t.decided),
  observerToMainThread: (t: TaskTimes) => sub(t.benchSeen, t.statusSeen),
};

export function sub(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a - b;
}

/** p50/p99/max of a part over tasks. */
export function of<T>(tasks: T[], part: (t: T) => number | undefined): string {
  const values = tasks.flatMap((t) => {
    const v = part(t);
    return v === undefined ? [] : [v];
  });
  if (values.length === 0) return "-";
  const p = (n: number) => percentile(values, n).toFixed(0);
  return `p50 ${p(50)} p99 ${p(99)} max ${p(100)}`;
}

export function latencyLines(tasks: TaskTimes[], t0: number): string[] {
  const lines = [
    `result → status at the observer ${of(tasks, parts.observer)} ms; at the bench's main thread ${of(tasks, parts.mainThread)} ms`,
    `  parts: created → result at the observer ${of(tasks, parts.resultAtObserver)};` +
      ` created → the controller's decision ${of(tasks, parts.toDecision)};` +
      ` decision → status at the observer ${of(tasks, parts.decisionToObserver)};` +
      ` observer → main thread ${of(tasks, parts.observerToMainThread)}`,
  ];
  lines.push(
    ...quarterLines(
      tasks,
      t0,
      (q) =>
        `observer ${of(q, parts.observer)}; main thread ${of(q, parts.mainThread)};` +
        ` → result at the observer ${of(q, parts.resultAtObserver)}; → decision ${of(q, parts.toDecision)};` +
        ` decision → observer ${of(q, parts.decisionToObserver)}`,
    ),
  );
  return lines;
}

/** A line per quarter of kickoff order and of the result's creation, each `describe`d, under a heading of its own. */
export function quarterLines<T extends TaskTimes>(tasks: T[], t0: number, describe: (q: T[]) => string): string[] {
  const lines: string[] = [];
  for (const [name, by] of [
    ["kickoff order", (t: T) => t.order],
    ["the result's creation", (t: T) => t.created],
  ] as const) {
    lines.push(`  by quarter of ${name}:`);
    for (const q of quarters(tasks, by)) {
      if (q.length === 0) continue;
      const at = (t: T) => ((t.created - t0) / 1000).toFixed(0);
      lines.push(`    results created ${at(q[0]!)}–${at(q.at(-1)!)} s: ${describe(q)}`);
    }
  }
  return lines;
}
