import { describe, expect, it } from "vitest";
import { executionUser } from "./execution-user.ts";

describe("executionUser", () => {
  const alice = { kind: "user" as const, subject: "alice" };
  const org = { kind: "org" as const, subject: "tok-1" };

  it("a user token acts as its own user, whatever the crew's runAs", () => {
    expect(executionUser(alice, undefined, "bob")).toEqual({ ok: true, user: "alice" });
    expect(executionUser(alice, "alice", "bob")).toEqual({ ok: true, user: "alice" });
  });

  it("a user token naming another user is refused, naming that user", () => {
    const answer = executionUser(alice, "bob", undefined);
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.message).toMatch(/only an org token may name another user.*"bob"/);
  });

  it("an org token acts as the kickoff's user, else the crew's runAs, else nobody", () => {
    expect(executionUser(org, "carol", "bob")).toEqual({ ok: true, user: "carol" });
    expect(executionUser(org, undefined, "bob")).toEqual({ ok: true, user: "bob" });
    expect(executionUser(org, undefined, undefined)).toEqual({ ok: true });
  });

  it("an org admin signed in to the console acts as that person when neither the kickoff nor the crew names a user", () => {
    const admin = { kind: "org" as const, subject: "local", user: "local" };
    expect(executionUser(admin, undefined, undefined)).toEqual({ ok: true, user: "local" });
    expect(executionUser(admin, undefined, "bob")).toEqual({ ok: true, user: "bob" });
    expect(executionUser(admin, "carol", "bob")).toEqual({ ok: true, user: "carol" });
  });
});
