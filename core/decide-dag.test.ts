import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { decide } from "./decide.ts";
import type { Action, Decision, DecideInput } from "./decision.ts";
import { executionSpec, type ExecutionStatus } from "./execution.ts";
import type { ObservedTask } from "./observed-task.ts";
import type { TaskResultSpec } from "./task-result.ts";

// decide() as a DAG scheduler (task-graph.ts): asynchronous tasks side by side, the join, and what stop, failures,
// timeouts and restarts do to tasks running at the same time. The same fixed clock as decide.test.ts.

const ID = "0d6c2f4e-8a1b-4c3d-9e5f-6a7b8c9d0e1f";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();

/** Two asynchronous tasks, a third joining them (context: both), a fourth after it (no context list). */
const crew: CrewSpec = crewSpec.parse({
  inputs: [{ name: "topic" }],
  agents: [{ name: "writer", role: "{topic} Writer", goal: "Write about {topic}" }],
  tasks: [
    { name: "facts", agent: "writer", description: "Facts", expectedOutput: "F", asyncExecution: true },
    { name: "quotes", agent: "writer", description: "Quotes", expectedOutput: "Q", asyncExecution: true },
    { name: "draft", agent: "writer", description: "Draft", expectedOutput: "D", context: ["facts", "quotes"] },
    { name: "edit", agent: "writer", description: "Edit", expectedOutput: "E" },
  ],
  runner: { taskTimeoutSeconds: 60, executionTimeoutSeconds: 300, retries: 1 },
});
const names = ["facts", "quotes", "draft", "edit"] as const;
type Name = (typeof names)[number];

function input(over: {
  status?: ExecutionStatus;
  observed?: Partial<Record<Name, ObservedTask>>;
  now?: Date;
  spec?: CrewSpec;
  stop?: boolean;
  canStartTask?: DecideInput["canStartTask"];
}): DecideInput {
  return {
    execution: {
      name: ID,
      namespace: "team-a",
      uid: "uid-1",
      generation: 1,
      spec: executionSpec.parse({
        crewRef: { name: "article" },
        inputs: { topic: "AI" },
        stop: over.stop ?? false,
        webhooks: { task: "http://hooks.test/task" },
      }),
      ...(over.status ? { status: over.status } : {}),
    },
    crew: over.spec ?? crew,
    observed: (over.observed ?? {}) as Record<string, ObservedTask>,
    deliveredWebhooks: new Set(
      (over.status?.tasks ?? []).filter((t) => t.phase === "Succeeded").map((t) => `task:${t.name}`),
    ),
    ...(over.canStartTask !== undefined ? { canStartTask: over.canStartTask } : {}),
    now: over.now ?? at(0),
  };
}

function result(task: Name, over: Partial<TaskResultSpec> = {}): TaskResultSpec {
  return {
    executionRef: { name: ID },
    taskName: task,
    taskIndex: names.indexOf(task),
    agent: "AI Writer",
    output: `output of ${task}`,
    attempt: 1,
    executionTime: 5,
    ...over,
  };
}
const running = (startS: number): ObservedTask => ({ run: { state: "running", startTime: iso(startS) }, results: [] });
const succeeded = (task: Name, startS: number): ObservedTask => ({
  run: { state: "succeeded", startTime: iso(startS) },
  results: [result(task)],
});
const failed = (task: Name, startS: number, error: string): ObservedTask => ({
  run: { state: "failed", startTime: iso(startS), reason: "BackoffLimitExceeded" },
  results: [result(task, { output: undefined, error })],
});

const ofType = <T extends Action["type"]>(d: Decision, type: T) =>
  d.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const starts = (d: Decision) => ofType(d, "startTask").map((a) => a.taskName);
const stops = (d: Decision) => ofType(d, "stopTask").map((a) => a.taskName);
const statusOf = (d: Decision): ExecutionStatus => {
  const set = ofType(d, "setStatus");
  expect(set).toHaveLength(1);
  return set[0]!.status;
};
const phases = (s: ExecutionStatus) => Object.fromEntries((s.tasks ?? []).map((t) => [t.name, t.phase]));
const events = (d: Decision) => ofType(d, "event").map((e) => `${e.reason}: ${e.message}`);
/** The status an adapter holds after carrying a decision out (it went through JSON). */
const applied = (d: Decision, before?: ExecutionStatus): ExecutionStatus | undefined => {
  const set = ofType(d, "setStatus")[0];
  return set ? (JSON.parse(JSON.stringify(set.status)) as ExecutionStatus) : before;
};

/** The status once both asynchronous tasks were started at 0 s. */
const bothStarted = () => applied(decide(input({ now: at(0) })))!;

describe("decide: asynchronous tasks start together", () => {
  const d = decide(input({ now: at(0) }));

  it("starts both asynchronous tasks at once, in spec order, and nothing that waits for them", () => {
    expect(starts(d)).toEqual(["facts", "quotes"]);
    expect(ofType(d, "startTask").map((a) => a.index)).toEqual([0, 1]);
  });

  it("gives an asynchronous task without a context list no context", () => {
    for (const start of ofType(d, "startTask")) expect(start.assignment.context).toEqual([]);
  });

  it("records both as Running, names the first as the current task and counts nothing completed", () => {
    const status = statusOf(d);
    expect(phases(status)).toEqual({ facts: "Running", quotes: "Running", draft: "Pending", edit: "Pending" });
    expect(status).toMatchObject({
      phase: "Running",
      currentTask: "facts",
      progress: { completedTasks: 0, totalTasks: 4 },
    });
    expect(status.conditions?.[0]?.message).toBe('Running tasks "facts", "quotes" (0/4 completed)');
    expect(events(d)).toEqual(['TaskStarted: Task "facts" (1/4) started', 'TaskStarted: Task "quotes" (2/4) started']);
  });

  it("creates both runs before writing the status, and looks again at their deadline", () => {
    expect(d.actions.map((a) => a.type)).toEqual(["startTask", "startTask", "setStatus", "event", "event"]);
    expect(d.requeueAfterSeconds).toBe(60);
  });
});

describe("decide: the join", () => {
  it("does not start the joining task while one asynchronous task still runs, and moves the current task on", () => {
    const status = bothStarted();
    const d = decide(input({ status, observed: { facts: succeeded("facts", 0), quotes: running(0) }, now: at(8) }));
    expect(starts(d)).toEqual([]);
    expect(phases(statusOf(d))).toEqual({ facts: "Succeeded", quotes: "Running", draft: "Pending", edit: "Pending" });
    expect(statusOf(d)).toMatchObject({ currentTask: "quotes", progress: { completedTasks: 1, totalTasks: 4 } });
    expect(statusOf(d).conditions?.[0]?.message).toBe('Running task "quotes" (2/4)');
    expect(ofType(d, "webhook").map((w) => w.hook)).toEqual(["task:facts"]);
  });

  it("keeps the first task current when the second finishes first", () => {
    const status = bothStarted();
    const d = decide(input({ status, observed: { facts: running(0), quotes: succeeded("quotes", 0) }, now: at(8) }));
    expect(starts(d)).toEqual([]);
    expect(statusOf(d)).toMatchObject({ currentTask: "facts", progress: { completedTasks: 1, totalTasks: 4 } });
  });

  it("starts the joining task once both succeeded, with exactly their outputs as context, in its list's order", () => {
    const status = bothStarted();
    const observed = { facts: succeeded("facts", 0), quotes: succeeded("quotes", 0) };
    const d = decide(input({ status, observed, now: at(9) }));
    expect(starts(d)).toEqual(["draft"]);
    expect(ofType(d, "startTask")[0]!.assignment.context).toEqual([
      { task: "facts", output: "output of facts" },
      { task: "quotes", output: "output of quotes" },
    ]);
    expect(statusOf(d)).toMatchObject({ currentTask: "draft", progress: { completedTasks: 2, totalTasks: 4 } });
  });

  it("gives the synchronous task after the join, which has no context list, every earlier output", () => {
    const observed = { facts: succeeded("facts", 0), quotes: succeeded("quotes", 0), draft: succeeded("draft", 9) };
    const status = applied(
      decide(
        input({ status: bothStarted(), observed: { facts: observed.facts, quotes: observed.quotes }, now: at(9) }),
      ),
    );
    const d = decide(input({ status, observed, now: at(20) }));
    expect(starts(d)).toEqual(["edit"]);
    expect(ofType(d, "startTask")[0]!.assignment.context.map((c) => c.task)).toEqual(["facts", "quotes", "draft"]);
  });

  it("gives a task whose context names one earlier task only that output", () => {
    const spec = crewSpec.parse({
      ...crew,
      tasks: crew.tasks.map((t) => (t.name === "draft" ? { ...t, context: ["quotes"] } : t)),
    });
    const observed = { facts: succeeded("facts", 0), quotes: succeeded("quotes", 0) };
    const status = applied(decide(input({ spec, now: at(0) })));
    const d = decide(input({ spec, status, observed, now: at(9) }));
    expect(ofType(d, "startTask")[0]!.assignment.context).toEqual([{ task: "quotes", output: "output of quotes" }]);
  });
});

describe("decide: a failure beside a running task", () => {
  const status = bothStarted();
  const d = decide(
    input({ status, observed: { facts: running(0), quotes: failed("quotes", 0, "rate limited") }, now: at(7) }),
  );

  it("fails the execution with the failed task's error and stops the task running beside it", () => {
    expect(stops(d)).toEqual(["facts"]);
    expect(starts(d)).toEqual([]);
    const s = statusOf(d);
    expect(s).toMatchObject({ phase: "Failed", error: 'Task "quotes" failed: rate limited' });
    expect(s.tasks).toMatchObject([
      {
        name: "facts",
        phase: "Stopped",
        message: 'Stopped: Task "quotes" failed: rate limited',
        completionTime: iso(7),
      },
      { name: "quotes", phase: "Failed", message: 'Task "quotes" failed: rate limited' },
      { name: "draft", phase: "Pending" },
      { name: "edit", phase: "Pending" },
    ]);
    expect(s.progress).toEqual({ completedTasks: 0, totalTasks: 4 });
    expect(events(d)).toEqual([
      'TaskFailed: Task "quotes" failed: rate limited',
      'ExecutionFailed: Task "quotes" failed: rate limited',
    ]);
  });

  it("stops the other task again if its run is still seen after the execution failed", () => {
    const again = decide(
      input({
        status: applied(d)!,
        observed: { facts: running(0), quotes: failed("quotes", 0, "rate limited") },
        now: at(8),
      }),
    );
    expect(again.actions).toEqual([{ type: "stopTask", index: 0, taskName: "facts" }]);
  });

  it("keeps a task that succeeded beside the failure as Succeeded", () => {
    const both = decide(
      input({ status, observed: { facts: succeeded("facts", 0), quotes: failed("quotes", 0, "boom") }, now: at(7) }),
    );
    expect(stops(both)).toEqual([]);
    expect(phases(statusOf(both))).toMatchObject({ facts: "Succeeded", quotes: "Failed" });
    expect(statusOf(both).progress).toEqual({ completedTasks: 1, totalTasks: 4 });
  });

  it("reports the first failed task in spec order when both failed", () => {
    const both = decide(
      input({
        status,
        observed: { facts: failed("facts", 0, "first"), quotes: failed("quotes", 0, "second") },
        now: at(7),
      }),
    );
    expect(statusOf(both).error).toBe('Task "facts" failed: first');
    expect(stops(both)).toEqual([]);
  });
});

describe("decide: stop and timeouts with tasks side by side", () => {
  it("stops every running task on a stop, each ending as Stopped", () => {
    const d = decide(
      input({ status: bothStarted(), observed: { facts: running(0), quotes: running(0) }, now: at(5), stop: true }),
    );
    expect(stops(d)).toEqual(["facts", "quotes"]);
    expect(phases(statusOf(d))).toEqual({ facts: "Stopped", quotes: "Stopped", draft: "Pending", edit: "Pending" });
    expect(statusOf(d).phase).toBe("Stopped");
  });

  it("stops started tasks whose runs are not visible yet", () => {
    const d = decide(input({ status: bothStarted(), observed: {}, now: at(1), stop: true }));
    expect(stops(d)).toEqual(["facts", "quotes"]);
  });

  it("times out the task whose deadline passed and stops the one running beside it", () => {
    // quotes was retried by hand later: its run started at 30 s, facts at 0 s.
    const d = decide(
      input({ status: bothStarted(), observed: { facts: running(0), quotes: running(30) }, now: at(61) }),
    );
    expect(stops(d)).toEqual(["facts", "quotes"]);
    const s = statusOf(d);
    expect(s).toMatchObject({ phase: "Failed", error: 'Task "facts" timed out after 60s' });
    expect(phases(s)).toMatchObject({ facts: "Failed", quotes: "Stopped" });
    expect(s.conditions?.[0]).toMatchObject({ status: "False", reason: "TaskTimedOut" });
  });

  it("asks to be called back at the nearest deadline of the tasks running", () => {
    const status = bothStarted();
    const d = decide(input({ status, observed: { facts: succeeded("facts", 0), quotes: running(0) }, now: at(20) }));
    expect(d.requeueAfterSeconds).toBe(40);
  });

  it("fails the execution on its own deadline naming every task running, and stops them all", () => {
    const late = crewSpec.parse({ ...crew, runner: { ...crew.runner, executionTimeoutSeconds: 30 } });
    const status = applied(decide(input({ spec: late, now: at(0) })))!;
    const d = decide(input({ status, observed: { facts: running(0), quotes: running(0) }, now: at(30) }));
    expect(stops(d)).toEqual(["facts", "quotes"]);
    const message = 'Execution timed out after 30s while running tasks "facts", "quotes"';
    expect(statusOf(d)).toMatchObject({ phase: "Failed", error: message });
    expect(phases(statusOf(d))).toMatchObject({ facts: "Failed", quotes: "Failed" });
  });
});

describe("decide: the limit on tasks starting at once, per task", () => {
  it("starts the tasks that have a slot and records the others as Pending", () => {
    const d = decide(input({ now: at(0), canStartTask: (name) => name === "facts" }));
    expect(starts(d)).toEqual(["facts"]);
    expect(phases(statusOf(d))).toMatchObject({ facts: "Running", quotes: "Pending" });
    expect(statusOf(d).currentTask).toBe("facts");
  });

  it("starts the waiting task once it has a slot, beside the one running", () => {
    const status = applied(decide(input({ now: at(0), canStartTask: (name) => name === "facts" })))!;
    const d = decide(input({ status, observed: { facts: running(0) }, now: at(3) }));
    expect(starts(d)).toEqual(["quotes"]);
    expect(phases(statusOf(d))).toMatchObject({ facts: "Running", quotes: "Running" });
    expect(statusOf(d).tasks?.[1]?.startTime).toBe(iso(3));
  });

  it("leaves a new execution none of whose tasks may start as it is", () => {
    expect(decide(input({ now: at(0), canStartTask: false }))).toEqual({ actions: [] });
    expect(decide(input({ now: at(0), canStartTask: () => false }))).toEqual({ actions: [] });
  });
});

describe("decide: restarts and replays with tasks side by side", () => {
  it("gives the same actions for the same input twice", () => {
    const given = input({
      status: bothStarted(),
      observed: { facts: succeeded("facts", 0), quotes: running(0) },
      now: at(8),
    });
    const copy = structuredClone(given);
    expect(decide(given)).toEqual(decide(copy));
    expect(given).toEqual(copy);
  });

  it("starts neither task again while their runs are not visible yet (the status records both started)", () => {
    const d = decide(input({ status: bothStarted(), observed: {}, now: at(2) }));
    expect(starts(d)).toEqual([]);
    expect(ofType(d, "setStatus")).toEqual([]);
  });

  it("starts only the task whose run does not exist after a crash between the two starts and the status", () => {
    const d = decide(input({ observed: { facts: running(0) }, now: at(2) }));
    expect(starts(d)).toEqual(["quotes"]);
    expect(phases(statusOf(d))).toMatchObject({ facts: "Running", quotes: "Running" });
  });

  it("runs the whole crew with exactly one start per task, the join after both, and every event once", () => {
    const observed: Partial<Record<Name, ObservedTask>> = {};
    const startedAt: Partial<Record<Name, number>> = {};
    const durations: Record<Name, number> = { facts: 4, quotes: 9, draft: 3, edit: 3 };
    const startLog: string[] = [];
    const seen: string[] = [];
    let status: ExecutionStatus | undefined;
    for (let t = 0; t <= 60 && status?.phase !== "Succeeded"; t++) {
      for (const name of names) {
        const s = startedAt[name];
        if (s === undefined) continue;
        // A run shows up 1 s after its start and succeeds after its duration.
        if (t >= s + 1 + durations[name]) observed[name] = succeeded(name, s);
        else if (t >= s + 1) observed[name] = running(s);
      }
      const d = decide(input({ ...(status ? { status } : {}), observed: { ...observed }, now: at(t) }));
      for (const a of ofType(d, "startTask")) {
        startLog.push(`${a.taskName}@${t}`);
        startedAt[a.taskName as Name] ??= t;
      }
      seen.push(...events(d));
      status = applied(d, status);
    }
    expect(startLog).toEqual(["facts@0", "quotes@0", "draft@10", "edit@14"]);
    expect(status?.phase).toBe("Succeeded");
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((e) => e.startsWith("TaskStarted"))).toHaveLength(4);
    expect(seen.filter((e) => e.startsWith("TaskSucceeded"))).toHaveLength(4);
  });
});
