/**
 * Whose connected apps an execution acts with (the integrations service's user): a user token's own user; for an org
 * principal the user the kickoff names, else the crew's `spec.apps.runAs`, else the person it is (an org admin signed
 * in to the console, whose connections the Apps tab shows), else nobody (app tools then answer that there is no user
 * for this execution). A user token may not act as someone else.
 */
export type ExecutionUser = { ok: true; user?: string } | { ok: false; message: string };

export function executionUser(
  caller: { kind: "org" | "user"; subject: string; user?: string },
  requested: string | undefined,
  runAs: string | undefined,
): ExecutionUser {
  if (caller.kind === "user") {
    if (requested !== undefined && requested !== caller.subject) {
      return {
        ok: false,
        message: `A user token kicks off as its own user; only an org token may name another user (asked for "${requested}")`,
      };
    }
    return { ok: true, user: caller.subject };
  }
  const user = requested ?? runAs ?? caller.user;
  return user === undefined ? { ok: true } : { ok: true, user };
}
