import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { decide } from "./decide.ts";
import type { DecideInput } from "./decision.ts";
import { executionSpec, type ExecutionStatus } from "./execution.ts";
import type { Decision as PersonDecision } from "./human-input-schema.ts";
import type { TaskResultSpec } from "./task-result.ts";
import { judgeToolCall } from "./tool-call-resume.ts";

/**
 * Held tool calls (issue 32 item 4) through decide() and POST /resume's judgment: a run parked on calls waits with a
 * request per call; only who may decide does; once every call has a decision the task's next run resumes the parked
 * conversation with the answers.
 */

const ID = "5f0c1e7a-3b1d-4c5e-9a8b-2d3c4e5f6a7b";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();

const crew: CrewSpec = crewSpec.parse({
  agents: [{ name: "mailer", role: "Mailer", goal: "Mail", apps: ["gmail"] }],
  tasks: [{ name: "mail", agent: "mailer", description: "Mail them", expectedOutput: "Sent" }],
  toolPolicy: { requireApproval: ["gmail/send_email", "http_request:POST"] },
  runner: { humanInputTimeoutSeconds: 3600 },
});

const parked: TaskResultSpec = {
  executionRef: { name: ID },
  taskName: "mail",
  taskIndex: 0,
  agent: "Mailer",
  attempt: 1,
  executionTime: 2,
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

const alice = { kind: "user", subject: "alice" } as const;
const olga = { kind: "org", subject: "olga" } as const;
// An app action is alice's to decide (her account); a call with no one's account an org admin's.
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
  feedback: approve ? "" : "no",
  decidedBy: by,
  decidedAt: iso(s),
});

function input(status: ExecutionStatus | undefined, decisions: PersonDecision[], now: Date): DecideInput {
  return {
    execution: {
      name: ID,
      spec: executionSpec.parse({
        crewRef: { name: "mailer" },
        requestedBy: { kind: "user", subject: "alice", user: "alice" },
        decisions,
      }),
      ...(status ? { status } : {}),
    },
    crew,
    observed: { mail: { run: { state: "succeeded" }, results: [parked] } },
    now,
  };
}

const statusOf = (d: ReturnType<typeof decide>) =>
  d.actions.find((a) => a.type === "setStatus")?.status as ExecutionStatus;

const running: ExecutionStatus = {
  phase: "Running",
  startTime: iso(0),
  crewSpec: crew,
  tasks: [{ name: "mail", phase: "Running", startTime: iso(0) }],
};

describe("a run parked on held tool calls", () => {
  it("waits for a person with one request per held call; an app action acts as the execution's user", () => {
    const status = statusOf(decide(input(running, [], at(5))));
    expect(status.phase).toBe("WaitingForInput");
    expect(status.inputRequests).toEqual([
      {
        kind: "toolCall",
        task: "mail",
        revision: 0,
        requestedAt: iso(5),
        toolCall: { id: "c1", tool: "gmail/send_email", arguments: { to: "x@example.com" }, actsAs: "alice" },
      },
      {
        kind: "toolCall",
        task: "mail",
        revision: 0,
        requestedAt: iso(5),
        toolCall: {
          id: "c2",
          tool: "http_request:POST",
          arguments: { method: "POST", headers: { Authorization: "[redacted]" } },
        },
      },
    ]);
    // Asked once: deciding again records nothing new.
    const again = decide(input(status, [], at(9)));
    expect(again.actions.filter((a) => a.type === "setStatus")).toEqual([]);
  });

  it("stays parked until every held call is decided, then runs again from the conversation with the answers", () => {
    const waiting = statusOf(decide(input(running, [], at(5))));
    const one = decide(input(waiting, [decided("c1", true, 7)], at(8)));
    expect(one.actions.some((a) => a.type === "startTask")).toBe(false);
    const both = decide(input(waiting, [decided("c1", true, 7), decided("c2", false, 9, olga)], at(10)));
    const start = both.actions.find((a) => a.type === "startTask");
    expect(start?.type === "startTask" && start.assignment.task).toMatchObject({
      revision: 1,
      resume: {
        messages: parked.parked!.messages,
        held: parked.parked!.held,
        answers: [
          { toolCallId: "c1", approve: true, by: "alice", feedback: "" },
          { toolCallId: "c2", approve: false, by: "olga", feedback: "no" },
        ],
      },
    });
  });

  it("fails the execution when nobody decides within runner.humanInputTimeoutSeconds", () => {
    const waiting = statusOf(decide(input(running, [], at(5))));
    const status = statusOf(decide(input(waiting, [], at(5 + 3600))));
    expect(status.phase).toBe("Failed");
    expect(status.error).toBe(
      'Task "mail" waited 3600s for a person to decide its calls of gmail/send_email, http_request:POST and nobody ' +
        "answered (runner.humanInputTimeoutSeconds)",
    );
  });

  it("names only the calls nobody decided on when the wait ends", () => {
    const waiting = statusOf(decide(input(running, [], at(5))));
    const status = statusOf(decide(input(waiting, [decided("c1", true, 6)], at(5 + 3600))));
    expect(status.error).toBe(
      'Task "mail" waited 3600s for a person to decide its call of http_request:POST and nobody answered ' +
        "(runner.humanInputTimeoutSeconds)",
    );
  });
});

describe("POST /resume on a held call", () => {
  const waiting = statusOf(decide(input(running, [], at(5))));
  const execution = (decisions: PersonDecision[] = []) => ({
    spec: input(waiting, decisions, at(6)).execution.spec,
    status: waiting,
  });
  const ask = (toolCallId: string, principal: { kind: "org" | "user"; subject: string; user?: string }) => ({
    task: "mail",
    toolCallId,
    approve: true,
    feedback: "",
    principal,
  });

  it("lets only the account's owner decide an app action; anyone else is told it is alice's", () => {
    expect(judgeToolCall(execution(), crew, ask("c1", alice), at(6))).toMatchObject({ ok: true });
    const alicesOnly = {
      ok: false,
      problem: "notDecider",
      message:
        "Only alice, whose connected account the call of gmail/send_email would act with, may approve or deny it",
    };
    // The org token sees the execution (the API answers 403); bob never gets here, as he may not read it (404).
    expect(judgeToolCall(execution(), crew, ask("c1", { kind: "org", subject: "org" }), at(6))).toEqual(alicesOnly);
    expect(judgeToolCall(execution(), crew, ask("c1", { kind: "user", subject: "bob" }), at(6))).toEqual(alicesOnly);
    // An org admin signed in as alice may.
    const admin = { kind: "org" as const, subject: "admin", user: "alice" };
    expect(judgeToolCall(execution(), crew, ask("c1", admin), at(6))).toMatchObject({ ok: true });
  });

  it("lets only an org admin decide a call that acts with no one's account, not the user who started the run", () => {
    expect(judgeToolCall(execution(), crew, ask("c2", alice), at(6))).toEqual({
      ok: false,
      problem: "notDecider",
      message:
        "Only an org admin (an org token, or an admin signed in to the console) may approve or deny the call of " +
        "http_request:POST: it acts with the crew's own means, not a user's account",
    });
    const verdict = judgeToolCall(execution(), crew, ask("c2", { kind: "org", subject: "org" }), at(6));
    expect(verdict).toMatchObject({
      ok: true,
      decision: { kind: "toolCall", task: "mail", revision: 0, toolCallId: "c2", approve: true },
      message: 'Tool call "http_request:POST" approved; 1 more held call of task "mail" waits',
    });
  });

  it("refuses a second decision on one call (400) and a call that was never held", () => {
    const verdict = judgeToolCall(execution([decided("c1", false, 6)]), crew, ask("c1", alice), at(7));
    expect(verdict).toEqual({
      ok: false,
      problem: "decided",
      message: 'Tool call "c1" of task "mail" was already denied by alice',
    });
    expect(judgeToolCall(execution(), crew, ask("c9", alice), at(7))).toMatchObject({ problem: "notWaiting" });
    expect(judgeToolCall(execution(), crew, { ...ask("c1", alice), task: "nope" }, at(7))).toMatchObject({
      problem: "unknownTask",
    });
  });
});
