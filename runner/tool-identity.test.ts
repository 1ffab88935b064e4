import { describe, expect, it } from "vitest";
import { approvalToolName, needsApproval } from "../core/tool-approval.ts";
import { callIdentity } from "./tool-identity.ts";

describe("callIdentity", () => {
  it("knows a connected app's tool as its action", () => {
    const call = callIdentity({ server: "apps", tool: "gmail__send_email" }, { to: "a@example.com" });
    expect(call).toEqual({ source: "app", app: "gmail", action: "send_email" });
    expect(approvalToolName(call!)).toBe("gmail/send_email");
    expect(needsApproval(["gmail:write"], call!)).toBe(true);
    expect(needsApproval(["salesforce"], call!)).toBe(false);
  });

  it("knows another MCP server's tool as server#tool", () => {
    const call = callIdentity({ server: "tickets", tool: "close_ticket" }, {});
    expect(approvalToolName(call!)).toBe("tickets#close_ticket");
    expect(needsApproval(["tickets#*"], call!)).toBe(true);
    expect(needsApproval(["tickets#open_ticket"], call!)).toBe(false);
  });

  it("knows http_request by the method of each call", () => {
    const post = callIdentity({ builtIn: "http_request" }, { method: "POST", url: "https://api.example.com" });
    const get = callIdentity({ builtIn: "http_request" }, { method: "GET", url: "https://api.example.com" });
    expect(approvalToolName(post!)).toBe("http_request:POST");
    expect(needsApproval(["http_request:POST"], post!)).toBe(true);
    expect(needsApproval(["http_request:POST"], get!)).toBe(false);
    expect(needsApproval(["http_request"], get!)).toBe(true);
  });

  it("names no other built-in, nor an apps tool that is no action", () => {
    expect(callIdentity({ builtIn: "delegate_work" }, {})).toBeUndefined();
    expect(callIdentity({ server: "apps", tool: "gmail__no_such_action" }, {})).toBeUndefined();
  });
});
