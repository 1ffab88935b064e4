import type { CrewSpec } from "./crew.ts";
import type { TaskAssignment } from "./task-assignment.ts";

/** Every app reference the crew's agents declare, each once, in the order first declared: what its credential allows. */
export function declaredApps(spec: Pick<CrewSpec, "agents">): string[] {
  return [...new Set(spec.agents.flatMap((agent) => agent.apps))];
}

/** When an execution's app credential expires: its deadline (start + the crew's execution timeout). */
export function appCredentialExpiry(startTime: string | Date, spec: Pick<CrewSpec, "runner">): Date {
  return new Date(new Date(startTime).getTime() + spec.runner.executionTimeoutSeconds * 1000);
}

/**
 * Whether a task's run calls apps: its agent's, or a coworker's it may delegate to (delegated work runs in the task's
 * process, so the credential must be there for it too).
 */
export function assignmentUsesApps(assignment: Pick<TaskAssignment, "agent" | "coworkers">): boolean {
  return [assignment.agent, ...(assignment.coworkers ?? []).map((c) => c.agent)].some((agent) => agent.apps.length > 0);
}
