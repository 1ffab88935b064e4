import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { decide } from "./decide.ts";
import type { Action, Decision, DecideInput } from "./decision.ts";
import type { ObservedTask } from "./observed-task.ts";
import { executionSpec, isFinished, type ExecutionStatus } from "./execution.ts";
import type { TaskResultSpec } from "./task-result.ts";
import type { TaskStep } from "./task-step.ts";

const ID = "5f0c1e7a-3b1d-4c5e-9a8b-2d3c4e5f6a7b";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
/** The clock, `s` seconds after the execution was first seen. */
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();

const crew: CrewSpec = crewSpec.parse({
  inputs: [{ name: "topic" }],
  agents: [
    { name: "researcher", role: "{topic} Researcher", goal: "Find facts about {topic}", backstory: "Knows {topic}" },
    { name: "analyst", role: "Analyst", goal: "Explain {topic}" },
  ],
  tasks: [
    { name: "research", agent: "researcher", description: "Research {topic}", expectedOutput: "Facts about {topic}" },
    { name: "analysis", agent: "analyst", description: "Analyse the facts", expectedOutput: "Findings" },
    { name: "report", agent: "analyst", description: "Report on {topic} for {audience}", expectedOutput: "A report" },
  ],
  runner: { taskTimeoutSeconds: 60, executionTimeoutSeconds: 300, retries: 1 },
});
const roles = { research: "AI Researcher", analysis: "Analyst", report: "Analyst" } as const;
type TaskName = keyof typeof roles;
const indexOf = { research: 0, analysis: 1, report: 2 } as const;

function input(over: {
  status?: ExecutionStatus;
  observed?: Record<string, ObservedTask>;
  now?: Date;
  crew?: CrewSpec | undefined;
  stop?: boolean;
  webhooks?: boolean;
  /** Asks for step webhooks too. */
  stepWebhooks?: boolean;
  /** Keys of the webhooks delivered so far; by default every one the given status called for (see hooksOf). */
  delivered?: string[];
  /** False: the controller's limit on tasks starting at once is reached. */
  canStartTask?: boolean;
}): DecideInput {
  return {
    execution: {
      name: ID,
      namespace: "team-a",
      uid: "uid-1",
      generation: 1,
      spec: executionSpec.parse({
        crewRef: { name: "research" },
        inputs: { topic: "AI", audience: "engineers" },
        meta: { ticket: 42 },
        stop: over.stop ?? false,
        ...(over.webhooks === false
          ? {}
          : {
              webhooks: {
                task: "http://hooks.test/task",
                crew: "http://hooks.test/crew",
                ...(over.stepWebhooks ? { step: "http://hooks.test/step" } : {}),
              },
            }),
      }),
      ...(over.status ? { status: over.status } : {}),
    },
    crew: "crew" in over ? over.crew : crew,
    observed: over.observed ?? {},
    deliveredWebhooks: new Set(over.delivered ?? hooksOf(over.status)),
    ...(over.canStartTask !== undefined ? { canStartTask: over.canStartTask } : {}),
    now: over.now ?? at(0),
  };
}

/** The webhooks a status calls for: an adapter that carried out the decision that wrote it has delivered them. */
function hooksOf(status: ExecutionStatus | undefined): string[] {
  const tasks = (status?.tasks ?? []).filter((t) => t.phase === "Succeeded").map((t) => `task:${t.name}`);
  return isFinished(status?.phase) ? [...tasks, "crew"] : tasks;
}

function result(task: TaskName, over: Partial<TaskResultSpec> = {}): TaskResultSpec {
  return {
    executionRef: { name: ID },
    taskName: task,
    taskIndex: indexOf[task],
    agent: roles[task],
    output: `output of ${task}`,
    attempt: 1,
    executionTime: 12.3456,
    tokenUsage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
    ...over,
  };
}

const running = (startS: number, results: TaskResultSpec[] = []): ObservedTask => ({
  run: { state: "running", startTime: iso(startS) },
  results,
});
const succeeded = (task: TaskName, startS: number, over: Partial<TaskResultSpec> = {}): ObservedTask => ({
  run: { state: "succeeded", startTime: iso(startS) },
  results: [result(task, over)],
});
const failed = (startS: number, results: TaskResultSpec[], reason?: string, message?: string): ObservedTask => ({
  run: { state: "failed", startTime: iso(startS), ...(reason ? { reason } : {}), ...(message ? { message } : {}) },
  results,
});

const ofType = <T extends Action["type"]>(d: Decision, type: T) =>
  d.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const statusOf = (d: Decision): ExecutionStatus => {
  const set = ofType(d, "setStatus");
  expect(set).toHaveLength(1);
  return set[0]!.status;
};
const events = (d: Decision) => ofType(d, "event").map((e) => `${e.reason}: ${e.message}`);
const types = (d: Decision) => d.actions.map((a) => a.type);

/** Statuses as an adapter would hold them after carrying a decision out (the status went through JSON). */
const applied = (d: Decision, before?: ExecutionStatus): ExecutionStatus | undefined => {
  const set = ofType(d, "setStatus")[0];
  return set ? (JSON.parse(JSON.stringify(set.status)) as ExecutionStatus) : before;
};

/** Runs decide() once from scratch, then with its own status, as a fresh execution would progress. */
function statusAfterStart(): ExecutionStatus {
  return applied(decide(input({ now: at(0) })))!;
}
/** Status once the first `n` tasks succeeded (task i started at 10*i s and finished before the next started). */
function statusAfter(n: number): { status: ExecutionStatus; observed: Record<string, ObservedTask> } {
  let status = statusAfterStart();
  const observed: Record<string, ObservedTask> = { research: running(0) };
  const names: TaskName[] = ["research", "analysis", "report"];
  for (let i = 0; i < n; i++) {
    observed[names[i]!] = succeeded(names[i]!, 10 * i);
    if (i + 1 < names.length) observed[names[i + 1]!] = running(10 * (i + 1));
    status = applied(decide(input({ status, observed, now: at(10 * (i + 1)) })), status)!;
  }
  return { status, observed };
}

describe("decide: starting an execution", () => {
  const d = decide(input({ now: at(0) }));

  it("starts the first task with every placeholder interpolated", () => {
    const starts = ofType(d, "startTask");
    expect(starts).toHaveLength(1);
    expect(starts[0]).toMatchObject({ index: 0, taskName: "research" });
    expect(starts[0]!.assignment).toEqual({
      execution: { id: ID, crew: "research", namespace: "team-a", uid: "uid-1" },
      task: { index: 0, name: "research", description: "Research AI", expectedOutput: "Facts about AI" },
      agent: {
        name: "researcher",
        role: "AI Researcher",
        goal: "Find facts about AI",
        backstory: "Knows AI",
        tools: [],
        mcps: [],
        apps: [],
        maxIter: 20,
      },
      context: [],
      inputs: { topic: "AI", audience: "engineers" },
      tools: { mcpServers: [], allowedHosts: [] },
      runtime: "kubecrew",
    });
  });

  it("marks the execution Running, takes a snapshot of the crew and reports progress", () => {
    const status = statusOf(d);
    expect(status).toMatchObject({
      phase: "Running",
      currentTask: "research",
      progress: { completedTasks: 0, totalTasks: 3 },
      progressText: "0/3",
      startTime: iso(0),
      observedGeneration: 1,
      tasks: [
        { name: "research", agent: "AI Researcher", phase: "Running", startTime: iso(0) },
        { name: "analysis", agent: "Analyst", phase: "Pending" },
        { name: "report", agent: "Analyst", phase: "Pending" },
      ],
    });
    expect(status.crewSpec).toEqual(crew);
    expect(status.conditions).toEqual([
      {
        type: "Succeeded",
        status: "Unknown",
        reason: "Running",
        message: 'Running task "research" (1/3)',
        lastTransitionTime: iso(0),
        observedGeneration: 1,
      },
    ]);
    expect(status.error).toBeUndefined();
    expect(status.completionTime).toBeUndefined();
  });

  it("records a TaskStarted event and sends no webhook yet", () => {
    expect(events(d)).toEqual(['TaskStarted: Task "research" (1/3) started']);
    expect(ofType(d, "event")[0]!.eventType).toBe("Normal");
    expect(ofType(d, "webhook")).toEqual([]);
  });

  it("creates the run before recording it, and records events last", () => {
    expect(types(d)).toEqual(["startTask", "setStatus", "event"]);
  });

  it("looks again at the task's deadline", () => {
    expect(d.requeueAfterSeconds).toBe(60);
  });
});

describe("decide: running tasks", () => {
  it("waits while the task runs, changing nothing", () => {
    const status = statusAfterStart();
    const d = decide(input({ status, observed: { research: running(0) }, now: at(20) }));
    expect(d.actions).toEqual([]);
    expect(d.requeueAfterSeconds).toBe(40);
  });

  it("does not start a task again while its run is not visible yet (the status records its start)", () => {
    const status = statusAfterStart();
    const d = decide(input({ status, observed: {}, now: at(5) }));
    expect(d.actions).toEqual([]);
    expect(d.requeueAfterSeconds).toBe(55);
  });

  it("starts the task again when the status was never written (a crash between creating the run and recording it)", () => {
    const d = decide(input({ observed: {}, now: at(5) }));
    expect(ofType(d, "startTask").map((a) => a.taskName)).toEqual(["research"]);
  });

  it("keeps waiting through a failed attempt while the run retries", () => {
    const status = statusAfterStart();
    const retrying = running(0, [result("research", { output: undefined, error: "connection reset", attempt: 1 })]);
    const d = decide(input({ status, observed: { research: retrying }, now: at(30) }));
    expect(d.actions).toEqual([]);
  });

  it("takes a later attempt's success after a failed attempt", () => {
    const status = statusAfterStart();
    const observed = {
      research: {
        run: { state: "succeeded" as const, startTime: iso(0) },
        results: [
          result("research", { output: undefined, error: "rate limited", attempt: 1 }),
          result("research", { output: "second try", attempt: 2 }),
        ],
      },
    };
    const d = decide(input({ status, observed, now: at(30) }));
    expect(statusOf(d).tasks?.[0]).toMatchObject({ phase: "Succeeded" });
    expect(ofType(d, "startTask")[0]!.assignment.context).toEqual([{ task: "research", output: "second try" }]);
  });

  it("waits for the result of a run that succeeded but whose result is not visible yet", () => {
    const status = statusAfterStart();
    const d = decide(
      input({
        status,
        observed: { research: { run: { state: "succeeded", startTime: iso(0) }, results: [] } },
        now: at(20),
      }),
    );
    expect(d.actions).toEqual([]);
    expect(d.requeueAfterSeconds).toBe(40);
  });
});

describe("decide: the next task", () => {
  const status = statusAfterStart();
  const observed = { research: succeeded("research", 0) };
  const d = decide(input({ status, observed, now: at(15) }));

  it("starts the next task with the earlier outputs as context", () => {
    const starts = ofType(d, "startTask");
    expect(starts.map((s) => [s.index, s.taskName])).toEqual([[1, "analysis"]]);
    expect(starts[0]!.assignment.context).toEqual([{ task: "research", output: "output of research" }]);
    expect(starts[0]!.assignment.agent).toMatchObject({
      name: "analyst",
      role: "Analyst",
      goal: "Explain AI",
      backstory: "",
    });
  });

  it("records the finished task and the progress", () => {
    expect(statusOf(d)).toMatchObject({
      phase: "Running",
      currentTask: "analysis",
      progress: { completedTasks: 1, totalTasks: 3 },
      progressText: "1/3",
      startTime: iso(0),
      tasks: [
        {
          name: "research",
          agent: "AI Researcher",
          phase: "Succeeded",
          startTime: iso(0),
          completionTime: iso(15),
          executionTime: 12.346,
        },
        { name: "analysis", phase: "Running", startTime: iso(15) },
        { name: "report", phase: "Pending" },
      ],
    });
    expect(statusOf(d).conditions).toEqual([
      expect.objectContaining({
        status: "Unknown",
        reason: "Running",
        message: 'Running task "analysis" (2/3)',
        lastTransitionTime: iso(0),
      }),
    ]);
  });

  it("records TaskSucceeded and TaskStarted and sends the task webhook", () => {
    expect(events(d)).toEqual([
      'TaskSucceeded: Task "research" (1/3) succeeded in 12.346s',
      'TaskStarted: Task "analysis" (2/3) started',
    ]);
    expect(ofType(d, "webhook")).toEqual([
      {
        type: "webhook",
        hook: "task:research",
        kind: "task",
        url: "http://hooks.test/task",
        payload: {
          kickoff_id: ID,
          task_id: "research",
          name: "research",
          description: "Research AI",
          expected_output: "Facts about AI",
          agent: "AI Researcher",
          output: "output of research",
          execution_time: 12.346,
          meta: { ticket: 42 },
        },
      },
    ]);
  });

  it("orders runs, then webhooks, then the status, then events", () => {
    expect(types(d)).toEqual(["startTask", "webhook", "setStatus", "event", "event"]);
  });

  it("sends no webhook when none was asked for", () => {
    const quiet = decide(input({ status, observed, now: at(15), webhooks: false }));
    expect(ofType(quiet, "webhook")).toEqual([]);
    expect(ofType(quiet, "startTask")).toHaveLength(1);
  });

  it("gives every earlier output as context to a task without a context list", () => {
    const observed2 = { research: succeeded("research", 0), analysis: succeeded("analysis", 10) };
    const start = ofType(
      decide(input({ status: statusAfter(1).status, observed: observed2, now: at(20) })),
      "startTask",
    );
    expect(start.map((s) => s.taskName)).toEqual(["report"]);
    expect(start[0]!.assignment.context).toEqual([
      { task: "research", output: "output of research" },
      { task: "analysis", output: "output of analysis" },
    ]);
  });

  it("gives only the tasks in the task's context list, in the list's order, or none for an empty list", () => {
    const withContext = (context: string[]) =>
      crewSpec.parse({ ...crew, tasks: crew.tasks.map((t) => (t.name === "report" ? { ...t, context } : t)) });
    const observed2 = { research: succeeded("research", 0), analysis: succeeded("analysis", 10) };
    const contextOf = (spec: CrewSpec) =>
      ofType(decide(input({ crew: spec, observed: observed2, now: at(20) })), "startTask")[0]!.assignment.context;
    expect(contextOf(withContext(["research"]))).toEqual([{ task: "research", output: "output of research" }]);
    expect(contextOf(withContext(["analysis", "research"]))).toEqual([
      { task: "analysis", output: "output of analysis" },
      { task: "research", output: "output of research" },
    ]);
    expect(contextOf(withContext([]))).toEqual([]);
  });

  it("interpolates placeholders of later tasks from the execution's inputs", () => {
    const observed2 = { research: succeeded("research", 0), analysis: succeeded("analysis", 10) };
    const start = ofType(decide(input({ observed: observed2, now: at(20) })), "startTask")[0]!;
    expect(start.assignment.task).toEqual({
      index: 2,
      name: "report",
      description: "Report on AI for engineers",
      expectedOutput: "A report",
    });
  });
});

describe("decide: no slot to start a task (the controller's limit on tasks starting at once)", () => {
  it("leaves a new execution as it is: no run, no Running status, no event, nothing to look at later", () => {
    const d = decide(input({ canStartTask: false }));
    expect(d.actions).toEqual([]);
    expect(d.requeueAfterSeconds).toBeUndefined();
  });

  it("records a running execution's finished task and its webhook, with the next task Pending and not started", () => {
    const status = statusAfterStart();
    const d = decide(
      input({ status, observed: { research: succeeded("research", 0) }, now: at(15), canStartTask: false }),
    );
    expect(types(d)).toEqual(["webhook", "setStatus", "event"]);
    expect(statusOf(d)).toMatchObject({
      phase: "Running",
      currentTask: "analysis",
      progress: { completedTasks: 1, totalTasks: 3 },
      tasks: [
        { name: "research", phase: "Succeeded", completionTime: iso(15) },
        { name: "analysis", phase: "Pending" },
        { name: "report", phase: "Pending" },
      ],
    });
    expect(statusOf(d).tasks?.[1]).not.toHaveProperty("startTime");
    expect(statusOf(d).conditions?.[0]).toMatchObject({
      reason: "Running",
      message: 'Waiting to start task "analysis" (2/3)',
    });
    expect(events(d)).toEqual(['TaskSucceeded: Task "research" (1/3) succeeded in 12.346s']);
    // Only the execution's deadline runs while the task waits.
    expect(d.requeueAfterSeconds).toBe(285);
  });

  it("starts the waiting task once there is a slot, as it would have started at once", () => {
    const status = statusAfterStart();
    const observed = { research: succeeded("research", 0) };
    const waiting = applied(decide(input({ status, observed, now: at(15), canStartTask: false })), status)!;
    const d = decide(input({ status: waiting, observed, now: at(40) }));
    expect(ofType(d, "startTask").map((a) => a.taskName)).toEqual(["analysis"]);
    expect(statusOf(d).tasks?.[1]).toEqual(expect.objectContaining({ phase: "Running", startTime: iso(40) }));
    expect(statusOf(d).conditions?.[0]?.message).toBe('Running task "analysis" (2/3)');
    expect(events(d)).toEqual(['TaskStarted: Task "analysis" (2/3) started']);
    expect(ofType(d, "webhook")).toEqual([]);
  });

  it("fails a running execution whose deadline passes while its next task waits", () => {
    const status = statusAfterStart();
    const observed = { research: succeeded("research", 0) };
    const waiting = applied(decide(input({ status, observed, now: at(15), canStartTask: false })), status)!;
    const d = decide(input({ status: waiting, observed, now: at(300), canStartTask: false }));
    expect(ofType(d, "startTask")).toEqual([]);
    expect(statusOf(d)).toMatchObject({
      phase: "Failed",
      error: 'Execution timed out after 300s while running task "analysis"',
    });
  });

  it("changes nothing for a task already running or an execution that finished", () => {
    const { status, observed } = statusAfter(1);
    expect(decide(input({ status, observed, now: at(12), canStartTask: false })).actions).toEqual([]);
    const done = statusAfter(3);
    expect(decide(input({ ...done, now: at(40), canStartTask: false })).actions).toEqual([]);
  });
});

describe("decide: completing an execution", () => {
  const { status } = statusAfter(2);
  const observed = {
    research: succeeded("research", 0),
    analysis: succeeded("analysis", 10, { tokenUsage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } }),
    report: succeeded("report", 20, { output: "# The report", executionTime: 7.5 }),
  };
  const d = decide(input({ status, observed, now: at(108.5) }));

  it("marks the execution Succeeded with the timing, the progress and a True condition", () => {
    const s = statusOf(d);
    expect(s).toMatchObject({
      phase: "Succeeded",
      progress: { completedTasks: 3, totalTasks: 3 },
      progressText: "3/3",
      startTime: iso(0),
      completionTime: iso(108.5),
      executionTime: 108.5,
    });
    expect(s.currentTask).toBeUndefined();
    expect(s.error).toBeUndefined();
    expect(s.tasks?.map((t) => [t.name, t.phase, t.executionTime])).toEqual([
      ["research", "Succeeded", 12.346],
      ["analysis", "Succeeded", 12.346],
      ["report", "Succeeded", 7.5],
    ]);
    expect(s.conditions).toEqual([
      {
        type: "Succeeded",
        status: "True",
        reason: "Succeeded",
        message: "All 3 tasks succeeded",
        lastTransitionTime: iso(108.5),
        observedGeneration: 1,
      },
    ]);
  });

  it("records TaskSucceeded and ExecutionSucceeded, and sends the last task and crew webhooks", () => {
    expect(events(d)).toEqual([
      'TaskSucceeded: Task "report" (3/3) succeeded in 7.5s',
      "ExecutionSucceeded: All 3 tasks succeeded",
    ]);
    const hooks = ofType(d, "webhook");
    expect(hooks.map((h) => [h.hook, h.kind])).toEqual([
      ["task:report", "task"],
      ["crew", "crew"],
    ]);
    expect(hooks[1]).toEqual({
      type: "webhook",
      hook: "crew",
      kind: "crew",
      url: "http://hooks.test/crew",
      payload: {
        kickoff_id: ID,
        status: "completed",
        result: "# The report",
        error: null,
        execution_time: 108.5,
        token_usage: { input_tokens: 201, output_tokens: 42, total_tokens: 243 },
        meta: { ticket: 42 },
      },
    });
  });

  it("stops looking: no requeue, no new run", () => {
    expect(d.requeueAfterSeconds).toBeUndefined();
    expect(ofType(d, "startTask")).toEqual([]);
    expect(ofType(d, "stopTask")).toEqual([]);
  });

  it("succeeds even when the results are first seen after the execution's deadline", () => {
    const late = decide(input({ status, observed, now: at(10_000) }));
    expect(statusOf(late).phase).toBe("Succeeded");
  });

  it("counts tokens of failed attempts too", () => {
    const withRetry = {
      ...observed,
      research: {
        run: { state: "succeeded" as const, startTime: iso(0) },
        results: [
          result("research", { output: undefined, error: "429", attempt: 1 }),
          result("research", { attempt: 2 }),
        ],
      },
    };
    const hook = ofType(decide(input({ status, observed: withRetry, now: at(108.5) })), "webhook").find(
      (h) => h.kind === "crew",
    )!;
    expect(hook.payload.token_usage).toEqual({ input_tokens: 301, output_tokens: 62, total_tokens: 363 });
  });
});

describe("decide: a failing task", () => {
  const { status } = statusAfter(1);

  it("gives the runner's own error message, from the last failed attempt", () => {
    const observed = {
      research: succeeded("research", 0),
      analysis: failed(
        10,
        [
          result("analysis", { output: undefined, error: "rate limited", attempt: 1 }),
          result("analysis", { output: undefined, error: "LLM call failed: 401 invalid API key", attempt: 2 }),
        ],
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
      ),
    };
    const d = decide(input({ status, observed, now: at(40) }));
    const s = statusOf(d);
    expect(s).toMatchObject({
      phase: "Failed",
      error: 'Task "analysis" failed: LLM call failed: 401 invalid API key',
      progress: { completedTasks: 1, totalTasks: 3 },
      progressText: "1/3",
      completionTime: iso(40),
      executionTime: 40,
    });
    expect(s.currentTask).toBeUndefined();
    expect(s.tasks?.map((t) => t.phase)).toEqual(["Succeeded", "Failed", "Pending"]);
    expect(s.tasks?.[1]).toMatchObject({
      startTime: iso(10),
      completionTime: iso(40),
      message: 'Task "analysis" failed: LLM call failed: 401 invalid API key',
    });
    expect(s.conditions).toEqual([
      expect.objectContaining({
        status: "False",
        reason: "TaskFailed",
        message: 'Task "analysis" failed: LLM call failed: 401 invalid API key',
      }),
    ]);
    expect(events(d)).toEqual([
      'TaskFailed: Task "analysis" failed: LLM call failed: 401 invalid API key',
      'ExecutionFailed: Task "analysis" failed: LLM call failed: 401 invalid API key',
    ]);
    expect(ofType(d, "event").map((e) => e.eventType)).toEqual(["Warning", "Warning"]);
    expect(ofType(d, "webhook")).toEqual([
      expect.objectContaining({
        kind: "crew",
        payload: expect.objectContaining({
          status: "error",
          result: null,
          error: 'Task "analysis" failed: LLM call failed: 401 invalid API key',
          execution_time: 40,
        }),
      }),
    ]);
    expect(ofType(d, "startTask")).toEqual([]);
    expect(ofType(d, "stopTask")).toEqual([]);
  });

  it("uses the run's message when the runner reported nothing", () => {
    const observed = {
      research: succeeded("research", 0),
      analysis: failed(10, [], "Error", "container exited with code 137"),
    };
    expect(statusOf(decide(input({ status, observed, now: at(40) }))).error).toBe(
      'Task "analysis" failed: container exited with code 137',
    );
  });

  it("says so when neither the runner nor the run gave a reason", () => {
    const observed = { research: succeeded("research", 0), analysis: failed(10, []) };
    expect(statusOf(decide(input({ status, observed, now: at(40) }))).error).toBe(
      'Task "analysis" failed: its run failed without a message',
    );
  });

  it("reports a run that hit its deadline (DeadlineExceeded) as timed out", () => {
    const observed = {
      research: succeeded("research", 0),
      analysis: failed(10, [], "DeadlineExceeded", "Job was active longer than specified deadline"),
    };
    const d = decide(input({ status, observed, now: at(71) }));
    expect(statusOf(d)).toMatchObject({ phase: "Failed", error: 'Task "analysis" timed out after 60s' });
    expect(statusOf(d).conditions?.[0]).toMatchObject({ status: "False", reason: "TaskTimedOut" });
    expect(ofType(d, "stopTask")).toEqual([]);
  });

  it("reports a failure as it is even when the execution's deadline has passed since", () => {
    const observed = {
      research: succeeded("research", 0),
      analysis: failed(10, [result("analysis", { output: undefined, error: "boom" })]),
    };
    expect(statusOf(decide(input({ status, observed, now: at(1000) }))).error).toBe('Task "analysis" failed: boom');
  });

  it("fails the very first task without an earlier status", () => {
    const d = decide(
      input({
        observed: { research: failed(0, [result("research", { output: undefined, error: "no key" })]) },
        now: at(3),
      }),
    );
    expect(statusOf(d)).toMatchObject({
      phase: "Failed",
      error: 'Task "research" failed: no key',
      progressText: "0/3",
    });
    expect(events(d)).toEqual([
      'TaskFailed: Task "research" failed: no key',
      'ExecutionFailed: Task "research" failed: no key',
    ]);
  });
});

describe("decide: timeouts", () => {
  it("stops a task that runs longer than its timeout", () => {
    const { status } = statusAfter(1);
    const observed = { research: succeeded("research", 0), analysis: running(10) };
    const before = decide(input({ status, observed, now: at(69.9) }));
    expect(before.actions).toEqual([]);
    expect(before.requeueAfterSeconds).toBe(0.1);
    const d = decide(input({ status, observed, now: at(70) }));
    expect(ofType(d, "stopTask")).toEqual([{ type: "stopTask", index: 1, taskName: "analysis" }]);
    expect(statusOf(d)).toMatchObject({ phase: "Failed", error: 'Task "analysis" timed out after 60s' });
    expect(statusOf(d).tasks?.[1]).toMatchObject({ phase: "Failed", startTime: iso(10), completionTime: iso(70) });
    expect(statusOf(d).conditions?.[0]).toMatchObject({ reason: "TaskTimedOut" });
    expect(events(d)).toEqual([
      'TaskFailed: Task "analysis" timed out after 60s',
      'ExecutionFailed: Task "analysis" timed out after 60s',
    ]);
    expect(types(d)).toEqual(["stopTask", "webhook", "setStatus", "event", "event"]);
  });

  it("times out a started task whose run never became visible", () => {
    const status = statusAfterStart();
    const d = decide(input({ status, observed: {}, now: at(60) }));
    expect(ofType(d, "stopTask")).toEqual([{ type: "stopTask", index: 0, taskName: "research" }]);
    expect(statusOf(d).error).toBe('Task "research" timed out after 60s');
  });

  it("stops the running task when the execution runs out of time, and names it", () => {
    const long = crewSpec.parse({ ...crew, runner: { ...crew.runner, taskTimeoutSeconds: 250 } });
    let status = applied(decide(input({ crew: long, now: at(0) })))!;
    const observed = { research: succeeded("research", 0), analysis: running(100) };
    status = applied(decide(input({ crew: long, status, observed, now: at(100) })), status)!;
    const waiting = decide(input({ crew: long, status, observed, now: at(250) }));
    expect(waiting.requeueAfterSeconds).toBe(50);
    const d = decide(input({ crew: long, status, observed, now: at(300) }));
    expect(ofType(d, "stopTask")).toEqual([{ type: "stopTask", index: 1, taskName: "analysis" }]);
    const s = statusOf(d);
    expect(s).toMatchObject({
      phase: "Failed",
      error: 'Execution timed out after 300s while running task "analysis"',
      executionTime: 300,
      progressText: "1/3",
    });
    expect(s.tasks?.map((t) => t.phase)).toEqual(["Succeeded", "Failed", "Pending"]);
    expect(s.tasks?.[1]).toMatchObject({ startTime: iso(100), completionTime: iso(300), message: s.error });
    expect(s.conditions?.[0]).toMatchObject({ status: "False", reason: "ExecutionTimedOut" });
    expect(events(d)).toEqual([
      'TaskFailed: Execution timed out after 300s while running task "analysis"',
      'ExecutionFailed: Execution timed out after 300s while running task "analysis"',
    ]);
  });

  it("names the task that was due when the execution ran out of time between two tasks", () => {
    const { status } = statusAfter(1);
    const d = decide(
      input({
        status: {
          ...status,
          tasks: status.tasks!.map((t) => (t.name === "analysis" ? { name: t.name, phase: "Pending" as const } : t)),
        },
        observed: { research: succeeded("research", 0) },
        now: at(300),
      }),
    );
    expect(ofType(d, "startTask")).toEqual([]);
    expect(ofType(d, "stopTask")).toEqual([]);
    expect(statusOf(d).error).toBe('Execution timed out after 300s while running task "analysis"');
  });

  it("blames the deadline that passed first when both passed unnoticed", () => {
    const { status } = statusAfter(1);
    const observed = { research: succeeded("research", 0), analysis: running(10) };
    // The task's deadline (70s) came before the execution's (300s).
    expect(statusOf(decide(input({ status, observed, now: at(5000) }))).error).toBe(
      'Task "analysis" timed out after 60s',
    );
    // A task started at 280s would have run out at 340s, after the execution's deadline.
    const lateObserved = { research: succeeded("research", 0), analysis: running(280) };
    const lateStatus = {
      ...status,
      tasks: status.tasks!.map((t) => (t.name === "analysis" ? { ...t, startTime: iso(280) } : t)),
    };
    expect(statusOf(decide(input({ status: lateStatus, observed: lateObserved, now: at(5000) }))).error).toBe(
      'Execution timed out after 300s while running task "analysis"',
    );
  });

  it("asks to be called back at the nearer of the task's and the execution's deadlines", () => {
    const long = crewSpec.parse({ ...crew, runner: { ...crew.runner, taskTimeoutSeconds: 1000 } });
    const d = decide(input({ crew: long, now: at(0) }));
    expect(d.requeueAfterSeconds).toBe(300);
    const status = applied(d)!;
    expect(
      decide(input({ crew: long, status, observed: { research: running(0) }, now: at(120.25) })).requeueAfterSeconds,
    ).toBe(179.75);
    const { status: s1 } = statusAfter(1);
    expect(
      decide(
        input({ status: s1, observed: { research: succeeded("research", 0), analysis: running(10) }, now: at(30) }),
      ).requeueAfterSeconds,
    ).toBe(40);
  });
});

describe("decide: stop", () => {
  it("stops the running task and ends the execution as Stopped", () => {
    const { status } = statusAfter(1);
    const observed = { research: succeeded("research", 0), analysis: running(10) };
    const d = decide(input({ status, observed, now: at(25), stop: true }));
    expect(ofType(d, "stopTask")).toEqual([{ type: "stopTask", index: 1, taskName: "analysis" }]);
    const s = statusOf(d);
    expect(s).toMatchObject({ phase: "Stopped", error: "Execution stopped", executionTime: 25, progressText: "1/3" });
    expect(s.tasks?.map((t) => t.phase)).toEqual(["Succeeded", "Stopped", "Pending"]);
    expect(s.tasks?.[1]).toMatchObject({ startTime: iso(10), completionTime: iso(25) });
    expect(s.conditions?.[0]).toMatchObject({ status: "False", reason: "Stopped", message: "Execution stopped" });
    expect(events(d)).toEqual(["ExecutionStopped: Execution stopped"]);
    expect(ofType(d, "event")[0]!.eventType).toBe("Warning");
    expect(ofType(d, "webhook")).toEqual([
      expect.objectContaining({
        kind: "crew",
        payload: expect.objectContaining({ status: "error", error: "Execution stopped" }),
      }),
    ]);
    expect(ofType(d, "startTask")).toEqual([]);
  });

  it("stops a started task whose run is not visible yet", () => {
    const status = statusAfterStart();
    const d = decide(input({ status, observed: {}, now: at(1), stop: true }));
    expect(ofType(d, "stopTask")).toEqual([{ type: "stopTask", index: 0, taskName: "research" }]);
    expect(statusOf(d).phase).toBe("Stopped");
  });

  it("stops an execution before it started, without starting anything", () => {
    const d = decide(input({ now: at(0), stop: true }));
    expect(ofType(d, "startTask")).toEqual([]);
    expect(ofType(d, "stopTask")).toEqual([]);
    expect(statusOf(d)).toMatchObject({ phase: "Stopped", error: "Execution stopped", executionTime: 0 });
  });
});

describe("decide: the crew", () => {
  it("fails an execution whose crew does not exist", () => {
    const d = decide(input({ crew: undefined, now: at(0) }));
    expect(statusOf(d)).toMatchObject({ phase: "Failed", error: 'Crew "research" not found', executionTime: 0 });
    expect(statusOf(d).conditions?.[0]).toMatchObject({ status: "False", reason: "CrewNotFound" });
    expect(events(d)).toEqual(['ExecutionFailed: Crew "research" not found']);
    expect(ofType(d, "startTask")).toEqual([]);
    expect(ofType(d, "webhook")[0]).toMatchObject({
      kind: "crew",
      payload: { status: "error", error: 'Crew "research" not found' },
    });
  });

  it("keeps running from its snapshot when the live crew is edited or deleted after the start", () => {
    const status = statusAfterStart();
    const edited = crewSpec.parse({
      ...crew,
      tasks: [
        { ...crew.tasks[0]!, description: "Something else" },
        { name: "extra", agent: "analyst", description: "New", expectedOutput: "New" },
      ],
    });
    const observed = { research: succeeded("research", 0) };
    for (const live of [edited, undefined]) {
      const d = decide(input({ status, observed, now: at(15), crew: live }));
      expect(ofType(d, "startTask").map((s) => s.taskName)).toEqual(["analysis"]);
      expect(statusOf(d).crewSpec).toEqual(crew);
      expect(statusOf(d).progress).toEqual({ completedTasks: 1, totalTasks: 3 });
    }
  });
});

describe("decide: a finished execution", () => {
  const { status, observed } = statusAfter(3);

  it("has finished after three results", () => {
    expect(status.phase).toBe("Succeeded");
  });

  it("does nothing more", () => {
    expect(decide(input({ status, observed, now: at(500) })).actions).toEqual([]);
    expect(decide(input({ status, observed, now: at(500), stop: true })).actions).toEqual([]);
    expect(decide(input({ status, observed, now: at(500), crew: undefined })).actions).toEqual([]);
  });

  it("stops a run still going (a stop raced a start)", () => {
    const stopped = applied(decide(input({ status: statusAfterStart(), now: at(1), stop: true })))!;
    const d = decide(input({ status: stopped, observed: { research: running(0) }, now: at(2), stop: true }));
    expect(d.actions).toEqual([{ type: "stopTask", index: 0, taskName: "research" }]);
  });

  it("leaves alone a run whose runner reported success and whose pod is only exiting", () => {
    const last = { ...observed.report!, run: { ...observed.report!.run!, state: "running" as const } };
    const d = decide(input({ status, observed: { ...observed, report: last }, now: at(500) }));
    expect(d.actions).toEqual([]);
  });
});

describe("decide: level-based and idempotent", () => {
  const cases: [string, DecideInput][] = [
    ["start", input({ now: at(0) })],
    ["next task", input({ status: statusAfterStart(), observed: { research: succeeded("research", 0) }, now: at(15) })],
    ["completion", input({ ...statusAfter(2), now: at(40) })],
    [
      "failure",
      input({
        status: statusAfter(1).status,
        observed: { research: succeeded("research", 0), analysis: failed(10, []) },
        now: at(40),
      }),
    ],
    [
      "task timeout",
      input({
        status: statusAfter(1).status,
        observed: { research: succeeded("research", 0), analysis: running(10) },
        now: at(80),
      }),
    ],
    [
      "execution timeout",
      input({
        status: statusAfter(1).status,
        observed: { research: succeeded("research", 0), analysis: running(290) },
        now: at(300),
      }),
    ],
    [
      "stop",
      input({
        status: statusAfter(1).status,
        observed: { research: succeeded("research", 0), analysis: running(10) },
        now: at(20),
        stop: true,
      }),
    ],
    ["crew not found", input({ crew: undefined })],
  ];
  // The completion case: every result visible.
  cases[2]![1].observed = {
    research: succeeded("research", 0),
    analysis: succeeded("analysis", 10),
    report: succeeded("report", 20),
  };

  it.each(cases)("gives the same actions for the same input twice: %s", (_name, given) => {
    const copy = structuredClone(given);
    expect(decide(given)).toEqual(decide(copy));
    expect(given).toEqual(copy);
  });

  it.each(cases)("has nothing new to do once its status is written: %s", (_name, given) => {
    const first = decide(given);
    const status = applied(first, given.execution.status);
    // The adapter delivered the webhooks it was asked for.
    const delivered = new Set([...(given.deliveredWebhooks ?? []), ...ofType(first, "webhook").map((h) => h.hook)]);
    for (const later of [0, 1, 30]) {
      const again = decide({
        ...given,
        deliveredWebhooks: delivered,
        execution: { ...given.execution, ...(status ? { status } : {}) },
        now: new Date(given.now.getTime() + later * 1000),
      });
      expect(ofType(again, "event")).toEqual([]);
      expect(ofType(again, "webhook")).toEqual([]);
      expect(ofType(again, "startTask")).toEqual([]);
      expect(ofType(again, "setStatus")).toEqual([]);
    }
  });

  it("asks again for a webhook nobody recorded as delivered (a controller restarted before delivering it)", () => {
    const { status, observed } = statusAfter(1);
    const d = decide(input({ status, observed, now: at(11), delivered: [] }));
    expect(ofType(d, "webhook").map((h) => [h.hook, h.payload.task_id])).toEqual([["task:research", "research"]]);
    expect(ofType(d, "setStatus")).toEqual([]);
    expect(ofType(d, "event")).toEqual([]);
  });

  it("asks for a finished execution's crew webhook until it is recorded, then for nothing", () => {
    const { status, observed } = statusAfter(3);
    const tasksDone = ["task:research", "task:analysis", "task:report"];
    const later = decide(input({ status, observed, now: at(100), delivered: tasksDone }));
    expect(ofType(later, "webhook")).toMatchObject([
      { hook: "crew", kind: "crew", payload: { status: "completed", result: "output of report" } },
    ]);
    expect(ofType(decide(input({ status, observed, now: at(100) })), "webhook")).toEqual([]);
  });

  it("keeps the condition's lastTransitionTime while its status stays the same, and moves it on a change", () => {
    const { status: s1 } = statusAfter(1);
    expect(s1.conditions?.[0]).toMatchObject({
      status: "Unknown",
      message: 'Running task "analysis" (2/3)',
      lastTransitionTime: iso(0),
    });
    const { status: s3 } = statusAfter(3);
    expect(s3.conditions?.[0]).toMatchObject({ status: "True", lastTransitionTime: iso(30) });
  });

  it("keeps other conditions as they are", () => {
    const other = {
      type: "Reviewed",
      status: "True" as const,
      reason: "ByHand",
      message: "",
      lastTransitionTime: iso(-100),
    };
    const status = { ...statusAfterStart(), conditions: [...statusAfterStart().conditions!, other] };
    const d = decide(input({ status, observed: { research: succeeded("research", 0) }, now: at(15) }));
    expect(statusOf(d).conditions).toContainEqual(other);
  });

  it("runs a whole execution with exactly one start per task and every event once", () => {
    const names: TaskName[] = ["research", "analysis", "report"];
    const observed: Record<string, ObservedTask> = {};
    const seen: string[] = [];
    const starts: string[] = [];
    let status: ExecutionStatus | undefined;
    // Reconcile every 2 seconds; each started task shows up 1s later and finishes 5s after that.
    const startedAt: Record<string, number> = {};
    for (let t = 0; t <= 60; t += 1) {
      for (const name of names) {
        const s = startedAt[name];
        if (s === undefined) continue;
        if (t >= s + 6) observed[name] = succeeded(name, s);
        else if (t >= s + 1) observed[name] = running(s);
      }
      const d = decide(input({ ...(status ? { status } : {}), observed: { ...observed }, now: at(t) }));
      for (const a of d.actions) {
        if (a.type === "startTask") {
          starts.push(a.taskName);
          startedAt[a.taskName] ??= t;
        }
        if (a.type === "event") seen.push(a.reason);
        if (a.type === "webhook") seen.push(`webhook:${a.kind}`);
      }
      status = applied(d, status);
    }
    expect(starts).toEqual(names);
    expect(seen).toEqual([
      "TaskStarted",
      "webhook:task",
      "TaskSucceeded",
      "TaskStarted",
      "webhook:task",
      "TaskSucceeded",
      "TaskStarted",
      "webhook:task",
      "webhook:crew",
      "TaskSucceeded",
      "ExecutionSucceeded",
    ]);
    expect(status).toMatchObject({ phase: "Succeeded", progressText: "3/3", executionTime: 18 });
  });
});

describe("step webhooks", () => {
  const step = (index: number, kind: "llm" | "tool", extra: Partial<TaskStep> = {}): TaskStep => ({
    index,
    kind,
    startedAt: iso(index),
    durationMs: 5,
    ...extra,
  });
  // research: attempt 1 failed after one turn, attempt 2 took three steps and succeeded; analysis is running.
  const { status } = statusAfter(1);
  const observed: Record<string, ObservedTask> = {
    research: {
      run: { state: "succeeded", startTime: iso(0) },
      results: [
        result("research", {
          attempt: 2,
          steps: [step(0, "llm"), step(1, "tool", { tool: "search" }), step(2, "llm")],
        }),
        result("research", {
          attempt: 1,
          output: undefined,
          error: "boom",
          steps: [step(0, "llm", { error: "boom" })],
        }),
      ],
    },
    analysis: running(10),
  };
  const stepHooks = (delivered: string[]) =>
    ofType(
      decide(
        input({ status, observed, now: at(15), stepWebhooks: true, delivered: [...hooksOf(status), ...delivered] }),
      ),
      "webhook",
    );

  it("sends the first step of each task not yet delivered, attempts in order, with the step as payload", () => {
    expect(stepHooks([])).toEqual([
      {
        type: "webhook",
        hook: "step:research:1:0",
        kind: "step",
        url: "http://hooks.test/step",
        payload: {
          kickoff_id: ID,
          task_id: "research",
          attempt: 1,
          step: { index: 0, kind: "llm", error: "boom", started_at: iso(0), duration_ms: 5 },
          meta: { ticket: 42 },
        },
      },
    ]);
  });

  it("sends the next step once the one before is recorded, one at a time, until every step went out", () => {
    const order: string[] = [];
    for (;;) {
      const due = stepHooks(order);
      if (due.length === 0) break;
      expect(due).toHaveLength(1);
      order.push(due[0]!.hook);
    }
    expect(order).toEqual(["step:research:1:0", "step:research:2:0", "step:research:2:1", "step:research:2:2"]);
    expect(stepHooks(order.slice(0, 2))[0]!.payload.step).toEqual({
      index: 1,
      kind: "tool",
      tool: "search",
      started_at: iso(1),
      duration_ms: 5,
    });
  });

  it("sends none when no step URL was given", () => {
    const hooks = ofType(decide(input({ status, observed, now: at(15) })), "webhook");
    expect(hooks.filter((h) => h.kind === "step")).toEqual([]);
  });
});
