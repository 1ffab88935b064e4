import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { decide } from "./decide.ts";
import type { Action, Decision, DecideInput } from "./decision.ts";
import { executionSpec, type ExecutionStatus } from "./execution.ts";
import type { Decision as PersonDecision } from "./human-input-schema.ts";
import type { ObservedTask } from "./observed-task.ts";
import type { TaskResultSpec } from "./task-result.ts";

/** decide() for humanInput tasks: the wait, its answers (approve, revise), its timeout, stop, and restarts. */

const ID = "5f0c1e7a-3b1d-4c5e-9a8b-2d3c4e5f6a7b";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();

const crew: CrewSpec = crewSpec.parse({
  agents: [{ name: "writer", role: "Writer", goal: "Write" }],
  tasks: [
    { name: "draft", agent: "writer", description: "Draft a post", expectedOutput: "A post", humanInput: true },
    { name: "publish", agent: "writer", description: "Polish the post", expectedOutput: "The final post" },
  ],
  runner: { taskTimeoutSeconds: 60, executionTimeoutSeconds: 300, humanInputTimeoutSeconds: 3600 },
});

const org = { kind: "org", subject: "org-token" } as const;
const approve = (revision: number, s: number, feedback = ""): PersonDecision => ({
  kind: "taskOutput",
  task: "draft",
  revision,
  approve: true,
  feedback,
  decidedBy: org,
  decidedAt: iso(s),
});
const revise = (revision: number, s: number, feedback: string): PersonDecision => ({
  ...approve(revision, s, feedback),
  approve: false,
});

function result(task: "draft" | "publish", over: Partial<TaskResultSpec> = {}): TaskResultSpec {
  return {
    executionRef: { name: ID },
    taskName: task,
    taskIndex: task === "draft" ? 0 : 1,
    agent: "Writer",
    output: `${task} v${over.revision ?? 0}`,
    attempt: 1,
    executionTime: 5,
    ...over,
  };
}

function input(over: {
  status?: ExecutionStatus;
  observed?: Record<string, ObservedTask>;
  decisions?: PersonDecision[];
  now: Date;
  stop?: boolean;
  delivered?: string[];
  crew?: CrewSpec;
}): DecideInput {
  return {
    execution: {
      name: ID,
      namespace: "team-a",
      uid: "uid-1",
      generation: 1,
      spec: executionSpec.parse({
        crewRef: { name: "blog" },
        stop: over.stop ?? false,
        webhooks: { task: "http://hooks.test/task", step: "http://hooks.test/step" },
        humanInputWebhook: { url: "http://hooks.test/hitl" },
        ...(over.decisions ? { decisions: over.decisions } : {}),
      }),
      ...(over.status ? { status: over.status } : {}),
    },
    crew: over.crew ?? crew,
    observed: over.observed ?? {},
    deliveredWebhooks: new Set(over.delivered ?? []),
    now: over.now,
  };
}

const ofType = <T extends Action["type"]>(d: Decision, type: T) =>
  d.actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
const statusOf = (d: Decision): ExecutionStatus => ofType(d, "setStatus")[0]!.status;
const applied = (d: Decision, before?: ExecutionStatus) => {
  const set = ofType(d, "setStatus")[0];
  return set ? (JSON.parse(JSON.stringify(set.status)) as ExecutionStatus) : before;
};
const phases = (s: ExecutionStatus) => Object.fromEntries((s.tasks ?? []).map((t) => [t.name, t.phase]));

/** The status once draft's first answer came back at 10 s: the execution waits for a person. */
function waiting(): { status: ExecutionStatus; observed: Record<string, ObservedTask> } {
  const started = applied(decide(input({ now: at(0) })))!;
  const observed = { draft: { run: { state: "succeeded" as const, startTime: iso(0) }, results: [result("draft")] } };
  const status = applied(decide(input({ status: started, observed, now: at(10) })), started)!;
  return { status, observed };
}

describe("decide: a humanInput task's answer waits for a person", () => {
  const started = applied(decide(input({ now: at(0) })))!;
  const observed = { draft: { run: { state: "succeeded" as const, startTime: iso(0) }, results: [result("draft")] } };
  const d = decide(input({ status: started, observed, now: at(10) }));
  const status = statusOf(d);

  it("records the wait instead of starting the next task, and says so", () => {
    expect(ofType(d, "startTask")).toEqual([]);
    expect(status).toMatchObject({
      phase: "WaitingForInput",
      currentTask: "draft",
      progress: { completedTasks: 0, totalTasks: 2 },
      inputRequests: [{ kind: "taskOutput", task: "draft", revision: 0, requestedAt: iso(10) }],
    });
    expect(phases(status)).toEqual({ draft: "WaitingForInput", publish: "Pending" });
    expect(status.conditions?.[0]).toMatchObject({
      status: "Unknown",
      reason: "WaitingForInput",
      message: 'Waiting for human input on task "draft" (1/2)',
    });
    expect(ofType(d, "event").map((e) => e.reason)).toEqual(["HumanInputRequested"]);
  });

  it("delivers the task webhook with the waiting answer, and the human-input webhook, once the wait is recorded", () => {
    // Not with the status that records the wait: a client resuming on the webhook must find the wait on record.
    expect(ofType(d, "webhook")).toEqual([]);
    const hooks = ofType(decide(input({ status, observed, now: at(11) })), "webhook");
    expect(hooks.map((h) => [h.hook, h.kind, h.url])).toEqual([
      ["human-input:draft", "human_input", "http://hooks.test/hitl"],
      ["task:draft", "task", "http://hooks.test/task"],
    ]);
    expect(hooks[0]!.payload).toEqual({
      execution_id: ID,
      kickoff_id: ID,
      task_id: "draft",
      output: "draft v0",
      revision: 0,
      requested_at: iso(10),
      meta: null,
    });
    expect(hooks[1]!.payload).toMatchObject({ task_id: "draft", output: "draft v0" });
  });

  it("looks again when the wait would time out, and writes nothing while it goes on", () => {
    expect(d.requeueAfterSeconds).toBe(3600);
    const later = decide(input({ status, observed, now: at(1000), delivered: ["task:draft", "human-input:draft"] }));
    expect(later.actions).toEqual([]);
    expect(later.requeueAfterSeconds).toBe(2610);
  });

  it("holds no run: the task's Job ended, and nothing is stopped or started again", () => {
    const again = decide(input({ status, observed: { draft: { results: [result("draft")] } }, now: at(20) }));
    expect(ofType(again, "stopTask")).toEqual([]);
    expect(ofType(again, "startTask")).toEqual([]);
  });
});

describe("decide: a person's answer", () => {
  const { status, observed } = waiting();

  it("approved: the task succeeded, the next starts with its output and the person's note as context", () => {
    const d = decide(input({ status, observed, decisions: [approve(0, 30, "Keep the title")], now: at(31) }));
    const next = statusOf(d);
    expect(next.phase).toBe("Running");
    expect(phases(next)).toEqual({ draft: "Succeeded", publish: "Running" });
    const [start] = ofType(d, "startTask");
    expect(start?.taskName).toBe("publish");
    expect(start?.assignment.context).toEqual([{ task: "draft", output: "draft v0", note: "Keep the title" }]);
    expect(ofType(d, "event").map((e) => e.reason)).toEqual(["TaskSucceeded", "TaskStarted"]);
  });

  it("approved without feedback: the context carries no note", () => {
    const d = decide(input({ status, observed, decisions: [approve(0, 30)], now: at(31) }));
    expect(ofType(d, "startTask")[0]?.assignment.context).toEqual([{ task: "draft", output: "draft v0" }]);
  });

  it("sent back: the task runs again as revision 1, told its answer and the feedback", () => {
    const d = decide(input({ status, observed, decisions: [revise(0, 30, "Shorter, please")], now: at(31) }));
    const [start] = ofType(d, "startTask");
    expect(start).toMatchObject({ index: 0, taskName: "draft" });
    expect(start!.assignment.task).toMatchObject({
      revision: 1,
      review: { previousOutput: "draft v0", feedback: "Shorter, please" },
    });
    const next = statusOf(d);
    expect(next.phase).toBe("Running");
    expect(next.tasks?.[0]).toMatchObject({ phase: "Running", revision: 1, startTime: iso(31) });
    expect(ofType(d, "event").map((e) => e.reason)).toEqual(["TaskStarted"]);
  });

  it("a revision's answer waits again, delivered under keys of its own", () => {
    const decisions = [revise(0, 30, "Shorter, please")];
    const rerun = applied(decide(input({ status, observed, decisions, now: at(31) })))!;
    const second = {
      draft: {
        run: { state: "succeeded" as const, startTime: iso(31), revision: 1 },
        results: [result("draft"), result("draft", { revision: 1 })],
      },
    };
    const delivered = ["task:draft", "human-input:draft"];
    const d = decide(input({ status: rerun, observed: second, decisions, now: at(40), delivered }));
    const next = statusOf(d);
    expect(next.phase).toBe("WaitingForInput");
    expect(next.inputRequests).toEqual([
      { kind: "taskOutput", task: "draft", revision: 0, requestedAt: iso(10) },
      { kind: "taskOutput", task: "draft", revision: 1, requestedAt: iso(40) },
    ]);
    const recorded = decide(input({ status: next, observed: second, decisions, now: at(41), delivered }));
    expect(ofType(recorded, "webhook").map((h) => [h.hook, h.payload.output])).toEqual([
      ["human-input:draft:r1", "draft v1"],
      ["task:draft:r1", "draft v1"],
      ["step:draft:1:0", undefined], // the person's decision to send answer 0 back is a step
    ]);
    expect(ofType(recorded, "webhook")[2]!.payload.step).toMatchObject({
      kind: "decision",
      decision: "sent_back",
      feedback: "Shorter, please",
    });
    // Approved at last: the revision's answer is the context of the next task.
    const approved = decide(
      input({
        status: next,
        observed: second,
        decisions: [...decisions, approve(1, 50)],
        now: at(51),
        delivered: [...delivered, "task:draft:r1", "human-input:draft:r1", "step:draft:1:0"],
      }),
    );
    expect(ofType(approved, "startTask")[0]?.assignment.context).toEqual([{ task: "draft", output: "draft v1" }]);
    // Only the approval's own step is left to deliver.
    expect(ofType(approved, "webhook").map((h) => h.hook)).toEqual(["step:draft:1:0:r1"]);
  });

  it("a sent-back answer's run, still in the cache, is neither the new run nor a reason to start it twice", () => {
    const decisions = [revise(0, 30, "Shorter")];
    const rerun = applied(decide(input({ status, observed, decisions, now: at(31) })))!;
    // The cache still shows revision 0's finished Job and not yet the new one: the status says it was created.
    const d = decide(input({ status: rerun, observed, decisions, now: at(32) }));
    expect(ofType(d, "startTask")).toEqual([]);
    expect(d.actions.filter((a) => a.type !== "webhook")).toEqual([]);
  });

  it("a revision that fails fails the execution with its own error", () => {
    const decisions = [revise(0, 30, "Shorter")];
    const rerun = applied(decide(input({ status, observed, decisions, now: at(31) })))!;
    const broken = {
      draft: {
        run: { state: "failed" as const, startTime: iso(31), revision: 1 },
        results: [result("draft"), result("draft", { revision: 1, output: undefined, error: "model down" })],
      },
    };
    const next = statusOf(decide(input({ status: rerun, observed: broken, decisions, now: at(40) })));
    expect(next).toMatchObject({ phase: "Failed", error: 'Task "draft" failed: model down' });
  });

  it("a revision's running Job is stopped with its own revision when the execution is stopped", () => {
    const decisions = [revise(0, 30, "Shorter")];
    const rerun = applied(decide(input({ status, observed, decisions, now: at(31) })))!;
    const going = {
      draft: { run: { state: "running" as const, startTime: iso(31), revision: 1 }, results: [result("draft")] },
    };
    const d = decide(input({ status: rerun, observed: going, decisions, now: at(35), stop: true }));
    expect(ofType(d, "stopTask")).toEqual([{ type: "stopTask", index: 0, taskName: "draft", revision: 1 }]);
  });
});

describe("decide: a wait that ends without an answer", () => {
  const { status, observed } = waiting();
  const delivered = ["task:draft", "human-input:draft"];

  it("fails the execution after runner.humanInputTimeoutSeconds, saying why", () => {
    const d = decide(input({ status, observed, now: at(10 + 3600) }));
    const message = 'Task "draft" waited 3600s for human input and nobody answered (runner.humanInputTimeoutSeconds)';
    expect(statusOf(d)).toMatchObject({ phase: "Failed", error: message });
    expect(statusOf(d).conditions?.[0]).toMatchObject({ status: "False", reason: "HumanInputTimedOut" });
    expect(phases(statusOf(d))).toEqual({ draft: "Failed", publish: "Pending" });
  });

  it("stops while waiting: the answer is not taken, nothing runs", () => {
    const d = decide(input({ status, observed, now: at(20), stop: true }));
    expect(statusOf(d)).toMatchObject({ phase: "Stopped", error: "Execution stopped" });
    expect(phases(statusOf(d))).toEqual({ draft: "Stopped", publish: "Pending" });
    expect(ofType(d, "stopTask")).toEqual([]);
  });

  it("does not count the wait against the execution's deadline", () => {
    const patient = crewSpec.parse({ ...crew, runner: { ...crew.runner, taskTimeoutSeconds: 1000 } });
    const later = (over: Parameters<typeof input>[0]) => decide(input({ ...over, delivered }));
    const snapshot = { ...status, crewSpec: patient };
    // Waited from 10 s to 2000 s (past executionTimeoutSeconds, 300 s): still waiting, not timed out.
    expect(later({ status: snapshot, observed, now: at(2000) }).actions).toEqual([]);
    const decisions = [approve(0, 2000)];
    const resumed = applied(later({ status: snapshot, observed, decisions, now: at(2001) }))!;
    expect(resumed.phase).toBe("Running");
    const publishing = {
      ...observed,
      publish: { run: { state: "running" as const, startTime: iso(2001) }, results: [] },
    };
    // 300 s of the crew's own time, plus the 1990 s waited: the deadline is at 2290 s.
    expect(later({ status: resumed, observed: publishing, decisions, now: at(2040) }).requeueAfterSeconds).toBe(250);
    const after = later({ status: resumed, observed: publishing, decisions, now: at(2290) });
    expect(statusOf(after)).toMatchObject({ phase: "Failed" });
    expect(statusOf(after).error).toMatch(/^Execution timed out after 300s/);
  });
});

describe("decide: the last task waits", () => {
  it("approving it completes the execution with the approved answer", () => {
    const last = crewSpec.parse({ ...crew, tasks: [{ ...crew.tasks[0]!, name: "draft" }] });
    const base = (over: Parameters<typeof input>[0]) => ({ ...input(over), crew: last });
    const started = applied(decide(base({ now: at(0) })))!;
    const observed = { draft: { run: { state: "succeeded" as const, startTime: iso(0) }, results: [result("draft")] } };
    const status = applied(decide(base({ status: started, observed, now: at(10) })))!;
    expect(status.phase).toBe("WaitingForInput");
    const done = statusOf(decide(base({ status, observed, decisions: [approve(0, 20)], now: at(21) })));
    expect(done).toMatchObject({ phase: "Succeeded", progress: { completedTasks: 1, totalTasks: 1 } });
  });
});

describe("decide: a wait beside a task that runs (asynchronous tasks)", () => {
  const parallel = crewSpec.parse({
    agents: [{ name: "writer", role: "Writer", goal: "Write" }],
    tasks: [
      { name: "draft", agent: "writer", description: "D", expectedOutput: "O", asyncExecution: true, humanInput: true },
      { name: "facts", agent: "writer", description: "F", expectedOutput: "O", asyncExecution: true },
      { name: "publish", agent: "writer", description: "P", expectedOutput: "O" },
    ],
    runner: { taskTimeoutSeconds: 60, humanInputTimeoutSeconds: 3600 },
  });
  const run = (over: Parameters<typeof input>[0]) => decide(input({ ...over, crew: parallel }));
  const started = applied(run({ now: at(0) }))!;
  const facts = { run: { state: "running" as const, startTime: iso(0) }, results: [] };
  const draft = { run: { state: "succeeded" as const, startTime: iso(0) }, results: [result("draft")] };

  it("waits for the person while the other task runs on, and starts the joining task only after both", () => {
    const d = run({ status: started, observed: { draft, facts }, now: at(10) });
    const status = statusOf(d);
    expect(status.phase).toBe("WaitingForInput");
    expect(phases(status)).toEqual({ draft: "WaitingForInput", facts: "Running", publish: "Pending" });
    expect(status.conditions?.[0]?.message).toBe('Waiting for human input on task "draft" (1/3); running task "facts"');
    // The running task's deadline comes first.
    expect(d.requeueAfterSeconds).toBe(50);
    const factsDone = {
      run: { state: "succeeded" as const, startTime: iso(0) },
      results: [result("draft", { taskName: "facts" })],
    };
    const bothDone = run({ status, observed: { draft, facts: factsDone }, now: at(20) });
    expect(ofType(bothDone, "startTask")).toEqual([]);
    expect(phases(statusOf(bothDone))).toEqual({ draft: "WaitingForInput", facts: "Succeeded", publish: "Pending" });
    const approved = run({
      status: applied(bothDone, status),
      observed: { draft, facts: factsDone },
      decisions: [approve(0, 30)],
      now: at(31),
    });
    expect(ofType(approved, "startTask").map((s) => s.taskName)).toEqual(["publish"]);
  });
});
