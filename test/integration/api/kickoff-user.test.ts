import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

/** Whose connected apps a run acts with (issue 14 identity), recorded on the execution as spec.requestedBy.user. */
let dev: RunningDev;
/** A flow whose one method is an agent's: a child execution (issue 33), which acts as the flow's kickoff does. */
const greetingFlow = `schema: crewai.flow/v1
name: GreetingFlow
methods:
  greet:
    start: true
    do: { call: agent, with: { role: Greeter, goal: Greet, backstory: Kind., input: "Say hello." } }
`;
beforeAll(async () => {
  const runAs = crewYaml("run-as", "mock", { tasks: 1 }).replace("  inputs:", "  apps: { runAs: dana }\n  inputs:");
  dev = await startTestDev({
    "plain.yaml": crewYaml("plain", "mock", { tasks: 1 }),
    "run-as.yaml": runAs,
    "greeting.yaml": greetingFlow,
  });
});
afterAll(() => dev?.stop());

async function kickoff(crew: string, token: string, body: Record<string, unknown>) {
  const res = await fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" }, ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function requestedBy(crew: string, token: string, body: Record<string, unknown> = {}) {
  const answer = await kickoff(crew, token, body);
  expect(answer.status).toBe(200);
  return dev.executionSpec(String(answer.body.kickoff_id))?.requestedBy;
}

describe("kickoff identity", () => {
  it("a user token runs as its user, also on a crew with runAs and when it names itself", async () => {
    expect(await requestedBy("run-as", tokens.alice)).toEqual({ kind: "user", subject: "alice", user: "alice" });
    expect(await requestedBy("plain", tokens.alice, { user: "alice" })).toEqual({
      kind: "user",
      subject: "alice",
      user: "alice",
    });
  });

  it("a user token naming another user is 403 with the error body, and starts nothing", async () => {
    const before = dev.executionIds().length;
    const answer = await kickoff("plain", tokens.alice, { user: "bob" });
    expect(answer).toEqual({
      status: 403,
      body: {
        error: "Forbidden",
        message: 'A user token kicks off as its own user; only an org token may name another user (asked for "bob")',
      },
    });
    expect(dev.executionIds()).toHaveLength(before);
  });

  it("an org token runs as the kickoff's user, else the crew's spec.apps.runAs, else no user", async () => {
    expect(await requestedBy("run-as", tokens.org, { user: "carol" })).toEqual({
      kind: "org",
      subject: "org",
      user: "carol",
    });
    expect(await requestedBy("run-as", tokens.org)).toEqual({ kind: "org", subject: "org", user: "dana" });
    expect(await requestedBy("plain", tokens.org)).toEqual({ kind: "org", subject: "org" });
  });

  it("a user that is not a string of 1-256 characters is 400 naming the field", async () => {
    for (const user of ["", 7, "x".repeat(257)]) {
      const answer = await kickoff("plain", tokens.org, { user });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body.details)).toContain("user");
    }
  });
});

describe("flow kickoff identity", () => {
  const flowKickoff = async (token: string, body: Record<string, unknown>) => {
    const res = await fetch(`${dev.url}/flows/greeting-flow/kickoff`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** The requester of the child execution the flow's method started. */
  const methodRequestedBy = async (token: string, body: Record<string, unknown> = {}) => {
    const before = new Set(dev.executionIds());
    expect((await flowKickoff(token, body)).status).toBe(200);
    const child = await waitFor(async () => dev.executionIds().find((id) => !before.has(id)), 20_000);
    return dev.executionSpec(child)?.requestedBy;
  };

  it("a method's child execution acts as the kickoff's user: a user token's own, an org token's named one", async () => {
    expect(await methodRequestedBy(tokens.alice)).toEqual({ kind: "user", subject: "alice", user: "alice" });
    expect(await methodRequestedBy(tokens.org, { user: "carol" })).toEqual({
      kind: "org",
      subject: "org",
      user: "carol",
    });
    expect(await methodRequestedBy(tokens.org)).toEqual({ kind: "org", subject: "org" });
  });

  it("a user token naming another user is 403 with the error body, and starts nothing", async () => {
    const before = dev.executionIds().length;
    expect(await flowKickoff(tokens.alice, { user: "bob" })).toEqual({
      status: 403,
      body: {
        error: "Forbidden",
        message: 'A user token kicks off as its own user; only an org token may name another user (asked for "bob")',
      },
    });
    expect(dev.executionIds()).toHaveLength(before);
  });
});
