import { describe, expect, it } from "vitest";
import { crewSpec } from "./crew-resource.ts";
import { executionSpec, type ExecutionStatus, type TaskPhase } from "./execution.ts";
import { executionEvents } from "./execution-events.ts";
import { waitedMs } from "./human-input.ts";
import type { Decision } from "./human-input-schema.ts";
import { judgeResume, NOT_WAITING } from "./resume.ts";
import { statusResponse } from "./status-view.ts";
import type { TaskResultSpec } from "./task-result.ts";

/** POST /resume judged against an execution, and what /status and the event stream show of a wait. */

const ID = "5f0c1e7a-3b1d-4c5e-9a8b-2d3c4e5f6a7b";
const at = (s: number) => new Date(Date.parse("2026-03-01T10:00:00.000Z") + s * 1000);
const iso = (s: number) => at(s).toISOString();

const crew = crewSpec.parse({
  agents: [{ name: "writer", role: "Writer", goal: "Write" }],
  tasks: [
    { name: "draft", agent: "writer", description: "Draft", expectedOutput: "A post", humanInput: true },
    { name: "publish", agent: "writer", description: "Publish", expectedOutput: "Done" },
  ],
  runner: { humanInputMaxRetries: 2 },
});
const by = { kind: "user", subject: "ada" } as const;

function waitingOn(
  revision: number,
  phases: Record<string, TaskPhase> = { draft: "WaitingForInput", publish: "Pending" },
) {
  const status: ExecutionStatus = {
    phase: "WaitingForInput",
    crewSpec: crew,
    currentTask: "draft",
    tasks: Object.entries(phases).map(([name, phase]) => ({ name, phase, ...(revision ? { revision } : {}) })),
    inputRequests: Array.from({ length: revision + 1 }, (_, r) => ({
      kind: "taskOutput" as const,
      task: "draft",
      revision: r,
      requestedAt: iso(10 * (r + 1)),
    })),
  };
  const decisions: Decision[] = Array.from({ length: revision }, (_, r) => ({
    kind: "taskOutput",
    task: "draft",
    revision: r,
    approve: false,
    feedback: `fix ${r}`,
    decidedBy: by,
    decidedAt: iso(10 * (r + 1) + 5),
  }));
  return { spec: executionSpec.parse({ crewRef: { name: "blog" }, decisions }), status };
}

describe("judgeResume", () => {
  const ask = { task: "draft", approve: true, feedback: "Good", by };

  it("approves the waiting answer: the decision names its revision, who decided and when", () => {
    const verdict = judgeResume(waitingOn(0), crew, ask, at(15));
    expect(verdict).toEqual({
      ok: true,
      status: "resumed",
      message: 'Task "draft" approved; the execution goes on',
      decision: {
        kind: "taskOutput",
        task: "draft",
        revision: 0,
        approve: true,
        feedback: "Good",
        decidedBy: by,
        decidedAt: iso(15),
      },
    });
  });

  it("sends it back while revisions are left, then refuses with what to do instead", () => {
    const first = judgeResume(waitingOn(1), crew, { ...ask, approve: false }, at(30));
    expect(first).toMatchObject({ ok: true, status: "retrying", decision: { revision: 1, approve: false } });
    const used = judgeResume(waitingOn(2), crew, { ...ask, approve: false }, at(40));
    expect(used).toMatchObject({ ok: false, problem: "revisionsUsedUp" });
    expect(used.message).toContain("runner.humanInputMaxRetries");
    expect(judgeResume(waitingOn(2), crew, ask, at(40))).toMatchObject({ ok: true, status: "resumed" });
  });

  it("answers completed when the answer approved was all that was left", () => {
    const last = waitingOn(0, { draft: "WaitingForInput", publish: "Succeeded" });
    expect(judgeResume(last, crew, ask, at(15))).toMatchObject({ ok: true, status: "completed" });
  });

  it("refuses a second answer to the same wait, a task that does not wait, and an unknown task", () => {
    const execution = waitingOn(0);
    const verdict = judgeResume(execution, crew, ask, at(15));
    if (!verdict.ok) throw new Error("expected a decision");
    const answered = { ...execution, spec: { ...execution.spec, decisions: [verdict.decision] } };
    expect(judgeResume(answered, crew, ask, at(16))).toEqual({
      ok: false,
      problem: "notWaiting",
      message: NOT_WAITING,
    });
    expect(judgeResume(execution, crew, { ...ask, task: "publish" }, at(15))).toMatchObject({ problem: "notWaiting" });
    expect(judgeResume(execution, crew, { ...ask, task: "nope" }, at(15))).toMatchObject({ problem: "unknownTask" });
  });

  it("refuses once the execution finished or was asked to stop", () => {
    const execution = waitingOn(0);
    const stopped = { ...execution, status: { ...execution.status, phase: "Stopped" as const } };
    expect(judgeResume(stopped, crew, ask, at(15))).toMatchObject({ problem: "notWaiting" });
    const stopping = { ...execution, spec: { ...execution.spec, stop: true } };
    expect(judgeResume(stopping, crew, ask, at(15))).toMatchObject({ problem: "notWaiting" });
  });
});

describe("waitedMs", () => {
  it("counts answered waits to their decision and open ones to now, overlapping waits once", () => {
    const { spec, status } = waitingOn(1);
    // Revision 0 waited 10 s → 15 s (answered), revision 1 from 20 s, open: at 50 s, 5 + 30 seconds.
    expect(waitedMs(spec, status, at(50))).toBe(35_000);
    const overlapping = {
      ...status,
      inputRequests: [
        ...status.inputRequests!,
        { kind: "taskOutput" as const, task: "other", revision: 0, requestedAt: iso(30) },
      ],
    };
    expect(waitedMs(spec, overlapping, at(50))).toBe(35_000);
  });
});

describe("a wait in /status and the event stream", () => {
  const result = (revision: number, output: string): TaskResultSpec => ({
    executionRef: { name: ID },
    taskName: "draft",
    taskIndex: 0,
    agent: "Writer",
    output,
    attempt: 1,
    revision,
    executionTime: 1,
  });
  const results = { draft: [result(0, "first"), result(1, "second")] };

  it("/status keeps the running shape and adds the answer that waits, until a decision answers it", () => {
    const { spec, status } = waitingOn(1);
    expect(statusResponse(status, results, "draft", 2, spec)).toEqual({
      status: "running",
      state: "RUNNING",
      current_task: "draft",
      progress: { completed_tasks: 0, total_tasks: 2 },
      pending_human_input: { task_id: "draft", output: "second", requested_at: iso(20) },
    });
    const answered = {
      decisions: [
        ...spec.decisions!,
        {
          kind: "taskOutput" as const,
          task: "draft",
          revision: 1,
          approve: true,
          feedback: "",
          decidedBy: by,
          decidedAt: iso(25),
        },
      ],
    };
    expect(statusResponse(status, results, "draft", 2, answered)).not.toHaveProperty("pending_human_input");
  });

  it("sends human_input_requested for each answer a person was asked about, after its steps", () => {
    const { status } = waitingOn(1);
    const started = { ...status, tasks: status.tasks!.map((t) => ({ ...t, startTime: iso(0) })) };
    const events = executionEvents(ID, started, results).map((e) => [e.event, e.data.output, e.data.revision]);
    expect(events).toEqual([
      ["task_started", undefined, undefined],
      ["human_input_requested", "first", 0],
      ["human_input_requested", "second", 1],
    ]);
  });
});
