import { z } from "zod";
import { appCatalogue, isAppName, type AppAction } from "./apps.ts";

/**
 * Approvals of tool calls (issue 32 item 4): which calls a crew's `toolPolicy.requireApproval` holds for a person,
 * what the person is shown of a held call, and who may decide on it. Pure: the runner asks `needsApproval` before a
 * call, the API asks `mayDecideToolCall` before recording a decision.
 *
 * A rule is one of
 * - `gmail/send_email`: that app action; `gmail`: every action of the app; `gmail:write`: its actions that change
 *   something (every action but the ones that only read: fetch, get, list, search, query);
 * - `server#tool`: that tool of an MCP server (a spec.mcpServers name); `server#*`: every tool of the server;
 * - `http_request`: every call of the built-in; `http_request:POST`: its calls with that method.
 */

export const MAX_APPROVAL_RULES = 100;

const HTTP_REQUEST = "http_request";
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const READ_VERBS = new Set(["fetch", "get", "list", "search", "query"]);

/** A call as the policy sees it: an app action, an MCP server's tool, or an http_request with its method. */
export type ToolCallIdentity =
  | ({ source: "app" } & AppAction)
  | { source: "mcp"; server: string; tool: string }
  | { source: "http"; method: string };

type Rule =
  | { source: "app"; app: string; action?: string; writesOnly?: true }
  | { source: "mcp"; server: string; tool?: string }
  | { source: "http"; method?: string };

/** Whether an app action changes something (sends, creates, updates, uploads…) rather than only reads. */
export function isWriteAction(action: string): boolean {
  return !READ_VERBS.has(action.split("_")[0] ?? "");
}

/** A rule read, or why it is none (the message the crew's validation shows). */
export function parseApprovalRule(text: string): { ok: true; rule: Rule } | { ok: false; message: string } {
  const http = /^http_request(?::([A-Za-z]+))?$/.exec(text);
  if (http) {
    const method = http[1]?.toUpperCase();
    if (method !== undefined && !(METHODS as readonly string[]).includes(method)) {
      return { ok: false, message: `unknown HTTP method "${http[1]}" (one of ${METHODS.join(", ")})` };
    }
    return { ok: true, rule: { source: "http", ...(method ? { method } : {}) } };
  }
  const mcp = /^([A-Za-z_][A-Za-z0-9_-]*)#([A-Za-z0-9_./-]+|\*)$/.exec(text);
  if (mcp) return { ok: true, rule: { source: "mcp", server: mcp[1]!, ...(mcp[2] === "*" ? {} : { tool: mcp[2]! }) } };
  const app = /^([a-z_]+)(?:\/([a-z_]+)|:(write))?$/.exec(text);
  if (app && isAppName(app[1]!)) {
    const name = app[1]!;
    const action = app[2];
    const actions: readonly string[] = appCatalogue[name].actions;
    if (action !== undefined && !actions.includes(action)) {
      return { ok: false, message: `app "${name}" has no action "${action}" (it has ${actions.join(", ")})` };
    }
    return {
      ok: true,
      rule: { source: "app", app: name, ...(action ? { action } : {}), ...(app[3] ? { writesOnly: true } : {}) },
    };
  }
  return {
    ok: false,
    message:
      "must be an app action (gmail/send_email), an app (gmail) or its write actions (gmail:write), " +
      "an MCP tool (server#tool, server#*), or http_request (http_request:POST for one method)",
  };
}

export const approvalRule = z
  .string()
  .max(200)
  .superRefine((text, ctx) => {
    const parsed = parseApprovalRule(text);
    if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
  });

function matches(rule: Rule, call: ToolCallIdentity): boolean {
  switch (rule.source) {
    case "http":
      return call.source === "http" && (rule.method === undefined || rule.method === call.method.toUpperCase());
    case "mcp":
      return (
        call.source === "mcp" && call.server === rule.server && (rule.tool === undefined || rule.tool === call.tool)
      );
    case "app":
      return (
        call.source === "app" &&
        call.app === rule.app &&
        (rule.action === undefined || rule.action === call.action) &&
        (!rule.writesOnly || isWriteAction(call.action))
      );
  }
}

/** Whether a person must approve this call first under the crew's `toolPolicy.requireApproval`. */
export function needsApproval(requireApproval: readonly string[], call: ToolCallIdentity): boolean {
  return requireApproval.some((text) => {
    const parsed = parseApprovalRule(text);
    return parsed.ok && matches(parsed.rule, call);
  });
}

/** The name a held call is shown and recorded by: `gmail/send_email`, `server#tool`, `http_request:POST`. */
export function approvalToolName(call: ToolCallIdentity): string {
  if (call.source === "app") return `${call.app}/${call.action}`;
  if (call.source === "mcp") return `${call.server}#${call.tool}`;
  return `${HTTP_REQUEST}:${call.method.toUpperCase()}`;
}

export const REDACTED = "[redacted]";
const SECRET_KEY = /authorization|token|secret|password|passwd|api[-_]?key|cookie|credential|private[-_]?key/i;

/**
 * The arguments a person is shown (and the execution records) of a held call: values under names that carry secrets
 * (authorization, token, password, api_key, cookie…) replaced by "[redacted]", at any depth, and a header list's
 * `{name, value}` pairs alike. The runner keeps the arguments themselves to make the call once it is approved.
 */
export function redactArguments(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactArguments);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const named = entries.find(([k]) => k === "name")?.[1];
  const secretPair = typeof named === "string" && SECRET_KEY.test(named);
  return Object.fromEntries(
    entries.map(([key, v]) => {
      if (SECRET_KEY.test(key) || (secretPair && key === "value")) return [key, REDACTED];
      return [key, redactArguments(v)];
    }),
  );
}

/**
 * Who may approve or deny a held call (issue 32 item 4): when it would act with a person's connected account (an app
 * action), that person only (their user token, or an org admin signed in to the console as them); otherwise — an MCP
 * tool, http_request, an app action of an execution started for no user — an org admin: an org token or service
 * account, or an admin signed in to the console. Not the user who started the execution: such a call acts with the
 * crew's own means (its Secrets, its network), which are the org's to allow. Anyone else who may see the execution is
 * told who may (403, whoMayDecideToolCall); one who may not see it, that it is not there (404).
 */
export function mayDecideToolCall(
  principal: { kind: "org" | "user"; subject: string; user?: string | undefined },
  actsAs: string | undefined,
): boolean {
  if (actsAs !== undefined) {
    return principal.kind === "user" ? principal.subject === actsAs : principal.user === actsAs;
  }
  return principal.kind === "org";
}

/**
 * Who may decide a held call, as POST /resume tells a caller who sees the call but may not decide it (403). It names
 * no one but the account's owner, whom the execution's status shows already as the call's `acts_as`.
 */
export function whoMayDecideToolCall(tool: string, actsAs: string | undefined): string {
  if (actsAs !== undefined) {
    return `Only ${actsAs}, whose connected account the call of ${tool} would act with, may approve or deny it`;
  }
  return (
    `Only an org admin (an org token, or an admin signed in to the console) may approve or deny the call of ${tool}: ` +
    "it acts with the crew's own means, not a user's account"
  );
}

/** What the model is told of a denied call, as the tool's result. */
export function denialText(by: string, feedback: string): string {
  const note = feedback.trim();
  return `denied by ${by}${note ? `: ${note}` : ""}`;
}
