import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { decide } from "./decide.ts";
import type { DecideInput } from "./decision.ts";
import { executionEventBody } from "./execution-event-bodies.ts";
import { executionEvents } from "./execution-events.ts";
import { executionSpec, type ExecutionStatus } from "./execution.ts";
import type { Decision as PersonDecision } from "./human-input-schema.ts";
import type { TaskResultSpec } from "./task-result.ts";

/**
 * People's decisions as steps, and held tool calls as events (issue 32): a held call is a `tool_call_held` event and
 * the wait's Kubernetes Event names the call and the account it acts as; each approval or denial (and each answer
 * approved or sent back) is a `step` of kind `decision` after the steps of the run it decided on — in the event
 * stream and as a step webhook.
 */

const ID = "5f0c1e7a-3b1d-4c5e-9a8b-2d3c4e5f6a7b";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();

const crew: CrewSpec = crewSpec.parse({
  agents: [{ name: "mailer", role: "Mailer", goal: "Mail", apps: ["gmail"] }],
  tasks: [{ name: "mail", agent: "mailer", description: "Mail them", expectedOutput: "Sent" }],
  toolPolicy: { requireApproval: ["gmail/send_email", "http_request:POST"] },
});

const llmStep = (index: number) => ({ index, kind: "llm" as const, startedAt: iso(1), durationMs: 5, output: "…" });

const parked: TaskResultSpec = {
  executionRef: { name: ID },
  taskName: "mail",
  taskIndex: 0,
  agent: "Mailer",
  attempt: 1,
  executionTime: 2,
  steps: [llmStep(0)],
  stepCount: 1,
  parked: {
    messages: [{ role: "user", content: "Mail them" }],
    held: [
      {
        approvalId: "a1",
        toolCallId: "c1",
        toolName: "gmail_send_email",
        tool: "gmail/send_email",
        shownArguments: { to: "x@example.com" },
        appAction: true,
      },
      {
        approvalId: "a2",
        toolCallId: "c2",
        toolName: "http_request",
        tool: "http_request:POST",
        shownArguments: { method: "POST", headers: { Authorization: "[redacted]" } },
      },
    ],
  },
};
const resumed: TaskResultSpec = {
  ...parked,
  parked: undefined,
  revision: 1,
  output: "Sent",
  steps: [{ ...llmStep(0), kind: "tool", tool: "gmail__send_email" }, llmStep(1)],
  stepCount: 2,
};

const alice = { kind: "user", subject: "alice" } as const;
const decided = (
  toolCallId: string,
  approve: boolean,
  s: number,
  by: PersonDecision["decidedBy"] = alice,
): PersonDecision => ({
  kind: "toolCall",
  task: "mail",
  revision: 0,
  toolCallId,
  approve,
  feedback: approve ? "" : "Not this address",
  decidedBy: by,
  decidedAt: iso(s),
});

function input(
  status: ExecutionStatus | undefined,
  decisions: PersonDecision[],
  now: Date,
  results: TaskResultSpec[] = [parked],
  delivered: string[] = [],
): DecideInput {
  return {
    execution: {
      name: ID,
      spec: executionSpec.parse({
        crewRef: { name: "mailer" },
        requestedBy: { kind: "user", subject: "alice", user: "alice" },
        webhooks: { step: "http://hooks.test/step" },
        decisions,
      }),
      ...(status ? { status } : {}),
    },
    crew,
    observed: { mail: { run: { state: "succeeded" }, results } },
    now,
    deliveredWebhooks: new Set(delivered),
  };
}

/** A step event's step, as the wire carries it. */
const stepOf = (e: { data: Record<string, unknown> }) =>
  e.data.step as { index?: number; kind?: string; decision?: string } | undefined;

const statusOf = (d: ReturnType<typeof decide>) =>
  d.actions.find((a) => a.type === "setStatus")?.status as ExecutionStatus;

const running: ExecutionStatus = {
  phase: "Running",
  startTime: iso(0),
  crewSpec: crew,
  tasks: [{ name: "mail", phase: "Running", startTime: iso(0) }],
};
const waiting = statusOf(decide(input(running, [], at(5))));

describe("the Kubernetes Event of a held tool call", () => {
  it("words it as an approval of the call, naming the tool and the account it acts as, never its arguments", () => {
    const events = decide(input(running, [], at(5))).actions.filter((a) => a.type === "event");
    const wait = events.find((e) => e.type === "event" && e.reason !== "TaskStarted");
    expect(wait).toMatchObject({ eventType: "Normal", reason: "ToolCallApprovalRequested" });
    const message = wait?.type === "event" ? wait.message : "";
    expect(message).toBe(
      'Task "mail" (1/1) waits for a person to approve its 2 calls of ' +
        "gmail/send_email (tool_call_id c1, acting as alice's connected account), " +
        "http_request:POST (tool_call_id c2) before it is made: an app action only its account's owner (alice) may " +
        "approve or deny; the others an org admin " +
        "(POST /resume with its tool_call_id, or the console)",
    );
    expect(message).not.toMatch(/answer|revision|x@example\.com/);
  });
});

describe("held calls and decisions in the event stream", () => {
  const events = (status: ExecutionStatus, decisions: PersonDecision[], results = [parked]) =>
    executionEvents(ID, status, { mail: results }, decisions);

  it("sends a tool_call_held per held call after the run's steps, then each decision as a step", () => {
    const held = events(waiting, []);
    expect(held.map((e) => [e.event, e.data.tool_call_id ?? null])).toEqual([
      ["task_started", null],
      ["step", null],
      ["tool_call_held", "c1"],
      ["tool_call_held", "c2"],
    ]);
    expect(held[2]!.data).toEqual({
      kickoff_id: ID,
      task_id: "mail",
      tool_call_id: "c1",
      tool: "gmail/send_email",
      arguments: { to: "x@example.com" },
      acts_as: "alice",
      revision: 0,
      requested_at: iso(5),
    });

    // c2 denied first, then c1 approved: steps 1 and 2 of the parked attempt, in the order people decided.
    const bob = { kind: "user", subject: "bob" } as const;
    const both = [decided("c2", false, 8, bob), decided("c1", true, 9)];
    const after = events(waiting, both, [parked, resumed]);
    expect(after.slice(0, held.length)).toEqual(held); // a reader's earlier events stay as they were
    expect(after.slice(held.length).map((e) => [e.event, e.data.attempt ?? null, stepOf(e)?.index])).toEqual([
      ["step", 1, 1],
      ["step", 1, 2],
      ["step", 1, 0], // the run after the decisions
      ["step", 1, 1],
    ]);
    expect(after[held.length]!.data.step).toEqual({
      index: 1,
      kind: "decision",
      tool: "http_request:POST",
      tool_call_id: "c2",
      input: JSON.stringify({ method: "POST", headers: { Authorization: "[redacted]" } }),
      output: "denied by bob: Not this address",
      decision: "denied",
      decided_by: { kind: "user", subject: "bob" },
      decided_at: iso(8),
      feedback: "Not this address",
      started_at: iso(5),
      duration_ms: 3000,
    });
    expect(after[held.length + 1]!.data.step).toMatchObject({
      kind: "decision",
      tool_call_id: "c1",
      acts_as: "alice",
      decision: "approved",
      output: "approved by alice",
      decided_by: { kind: "user", subject: "alice" },
      decided_at: iso(9),
    });
    for (const e of after) expect(executionEventBody.parse({ ...e.data, event: e.event })).toBeTruthy();
  });

  it("a decision made before the other's keeps its place: the stream only grows", () => {
    const one = events(waiting, [decided("c1", true, 7)]);
    const two = events(waiting, [decided("c1", true, 7), decided("c2", true, 9)]);
    expect(two.slice(0, one.length)).toEqual(one);
    expect(two.at(-1)!.data.step).toMatchObject({ index: 2, tool_call_id: "c2" });
  });

  it("an answer sent back and then approved: each decision a step after its human_input_requested", () => {
    const answer = (revision: number, output: string): TaskResultSpec => ({
      ...parked,
      parked: undefined,
      revision,
      output,
      steps: [llmStep(0)],
      stepCount: 1,
    });
    const decision = (revision: number, approve: boolean, s: number): PersonDecision => ({
      kind: "taskOutput",
      task: "mail",
      revision,
      approve,
      feedback: approve ? "" : "Shorter",
      decidedBy: { kind: "org", subject: "org" },
      decidedAt: iso(s),
    });
    const status: ExecutionStatus = {
      phase: "Succeeded",
      tasks: [{ name: "mail", phase: "Succeeded", startTime: iso(0) }],
      inputRequests: [
        { kind: "taskOutput", task: "mail", revision: 0, requestedAt: iso(2) },
        { kind: "taskOutput", task: "mail", revision: 1, requestedAt: iso(6) },
      ],
    };
    const all = executionEvents(ID, status, { mail: [answer(0, "Long"), answer(1, "Short")] }, [
      decision(0, false, 4),
      decision(1, true, 8),
    ]);
    expect(all.map((e) => [e.event, stepOf(e)?.decision ?? stepOf(e)?.kind ?? null])).toEqual([
      ["task_started", null],
      ["step", "llm"],
      ["human_input_requested", null],
      ["step", "sent_back"],
      ["step", "llm"],
      ["human_input_requested", null],
      ["step", "approved"],
      ["task_completed", null],
      ["execution_completed", null],
    ]);
    expect(all[3]!.data.step).toMatchObject({ index: 1, output: "sent back by org: Shorter", feedback: "Shorter" });
  });
});

describe("decisions as step webhooks", () => {
  it("follow the steps of the run they decided on, each under a key of its own", () => {
    const decisions = [decided("c1", true, 7), decided("c2", false, 9)];
    const stepHooks = (delivered: string[]) =>
      decide(input(waiting, decisions, at(10), [parked], delivered)).actions.flatMap((a) =>
        a.type === "webhook" && a.kind === "step" ? [a] : [],
      );
    expect(stepHooks([]).map((h) => h.hook)).toEqual(["step:mail:1:0"]);
    const first = stepHooks(["step:mail:1:0"]);
    expect(first.map((h) => h.hook)).toEqual(["step:mail:1:1"]);
    expect(first[0]!.payload).toMatchObject({
      task_id: "mail",
      attempt: 1,
      step: { kind: "decision", tool_call_id: "c1", decision: "approved", decided_by: alice },
    });
    const second = stepHooks(["step:mail:1:0", "step:mail:1:1"]);
    expect(second[0]!.payload).toMatchObject({ step: { index: 2, tool_call_id: "c2", decision: "denied" } });
  });
});
