import { describe, expect, it } from "vitest";
import {
  approvalRule,
  approvalToolName,
  denialText,
  mayDecideToolCall,
  needsApproval,
  redactArguments,
  REDACTED,
  whoMayDecideToolCall,
} from "./tool-approval.ts";

const problem = (text: string) => {
  const parsed = approvalRule.safeParse(text);
  return parsed.success ? undefined : parsed.error.issues[0]!.message;
};

describe("toolPolicy.requireApproval rules", () => {
  it("accepts app actions, apps, an app's writes, MCP tools and http_request by method", () => {
    for (const rule of [
      "gmail/send_email",
      "gmail",
      "salesforce:write",
      "docs#delete_page",
      "docs#*",
      "http_request",
      "http_request:post",
    ]) {
      expect(problem(rule), rule).toBeUndefined();
    }
  });

  it("refuses what names nothing, saying what exists", () => {
    expect(problem("gmail/delete_everything")).toBe(
      'app "gmail" has no action "delete_everything" (it has fetch_emails, get_email, send_email, create_draft)',
    );
    expect(problem("http_request:FETCH")).toMatch(/^unknown HTTP method "FETCH"/);
    expect(problem("shell")).toMatch(/^must be an app action \(gmail\/send_email\)/);
    expect(problem("server#")).toMatch(/^must be/);
  });

  it("holds exactly the calls a rule names", () => {
    const send = { source: "app", app: "gmail", action: "send_email" } as const;
    const fetch = { source: "app", app: "gmail", action: "fetch_emails" } as const;
    expect(needsApproval(["gmail/send_email"], send)).toBe(true);
    expect(needsApproval(["gmail/send_email"], fetch)).toBe(false);
    expect(needsApproval(["gmail:write"], send)).toBe(true);
    expect(needsApproval(["gmail:write"], fetch)).toBe(false);
    expect(needsApproval(["gmail"], fetch)).toBe(true);
    expect(needsApproval(["salesforce:write"], send)).toBe(false);
    expect(needsApproval(["salesforce:write"], { source: "app", app: "salesforce", action: "update_record" })).toBe(
      true,
    );
    expect(needsApproval(["salesforce:write"], { source: "app", app: "salesforce", action: "query" })).toBe(false);

    const del = { source: "mcp", server: "docs", tool: "delete_page" } as const;
    expect(needsApproval(["docs#delete_page"], del)).toBe(true);
    expect(needsApproval(["docs#read_page"], del)).toBe(false);
    expect(needsApproval(["docs#*"], del)).toBe(true);
    expect(needsApproval(["wiki#*"], del)).toBe(false);

    expect(needsApproval(["http_request:POST"], { source: "http", method: "post" })).toBe(true);
    expect(needsApproval(["http_request:POST"], { source: "http", method: "GET" })).toBe(false);
    expect(needsApproval(["http_request"], { source: "http", method: "GET" })).toBe(true);
    expect(needsApproval([], send)).toBe(false);
  });

  it("names a held call as the rules do", () => {
    expect(approvalToolName({ source: "app", app: "gmail", action: "send_email" })).toBe("gmail/send_email");
    expect(approvalToolName({ source: "mcp", server: "docs", tool: "delete_page" })).toBe("docs#delete_page");
    expect(approvalToolName({ source: "http", method: "post" })).toBe("http_request:POST");
  });
});

describe("a held call's arguments as a person sees them", () => {
  it("hides values named like secrets at any depth, and header pairs that carry one", () => {
    const shown = redactArguments({
      method: "POST",
      url: "https://api.example.com/orders",
      headers: [
        { name: "Authorization", value: "Bearer sk-live-123" },
        { name: "Accept", value: "application/json" },
      ],
      body: { to: "ann@example.com", api_key: "k-1", nested: [{ password: "hunter2", note: "hi" }] },
      access_token: "t-9",
    });
    expect(shown).toEqual({
      method: "POST",
      url: "https://api.example.com/orders",
      headers: [
        { name: "Authorization", value: REDACTED },
        { name: "Accept", value: "application/json" },
      ],
      body: { to: "ann@example.com", api_key: REDACTED, nested: [{ password: REDACTED, note: "hi" }] },
      access_token: REDACTED,
    });
    expect(JSON.stringify(shown)).not.toMatch(/sk-live|k-1|hunter2|t-9/);
  });
});

describe("who decides on a held call", () => {
  const ann = { kind: "user", subject: "ann" } as const;
  const bob = { kind: "user", subject: "bob" } as const;
  const org = { kind: "org", subject: "org" } as const;
  const orgAsAnn = { kind: "org", subject: "olga", user: "ann" } as const;
  const admin = { kind: "org", subject: "olga@example.com", user: "olga@example.com" } as const;

  it("a call with ann's account: ann only (her token, or an org admin signed in to the console as her)", () => {
    expect(mayDecideToolCall(ann, "ann")).toBe(true);
    expect(mayDecideToolCall(orgAsAnn, "ann")).toBe(true);
    expect(mayDecideToolCall(bob, "ann")).toBe(false);
    expect(mayDecideToolCall(org, "ann")).toBe(false);
    expect(mayDecideToolCall(admin, "ann")).toBe(false);
  });

  it("a call with no one's account: an org admin (an org token, an admin's session), never a user", () => {
    expect(mayDecideToolCall(org, undefined)).toBe(true);
    expect(mayDecideToolCall(admin, undefined)).toBe(true);
    // Not even the user who started the execution: the call acts with the crew's means, the org's to allow.
    expect(mayDecideToolCall(ann, undefined)).toBe(false);
    expect(mayDecideToolCall(bob, undefined)).toBe(false);
  });

  it("tells a caller who may not decide a call who may: the account's owner, or an org admin", () => {
    expect(whoMayDecideToolCall("gmail/send_email", "ann")).toBe(
      "Only ann, whose connected account the call of gmail/send_email would act with, may approve or deny it",
    );
    expect(whoMayDecideToolCall("github#create_issue", undefined)).toBe(
      "Only an org admin (an org token, or an admin signed in to the console) may approve or deny the call of " +
        "github#create_issue: it acts with the crew's own means, not a user's account",
    );
  });

  it("tells the model who denied and why", () => {
    expect(denialText("ann", "  not to customers  ")).toBe("denied by ann: not to customers");
    expect(denialText("ann", "")).toBe("denied by ann");
  });
});
