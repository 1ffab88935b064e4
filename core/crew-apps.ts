import type { CrewSpec } from "./crew.ts";

/** Every app reference the crew's agents declare, each once, in the order first declared: what its credential allows. */
export function declaredApps(spec: Pick<CrewSpec, "agents">): string[] {
  return [...new Set(spec.agents.flatMap((agent) => agent.apps))];
}

/** When an execution's app credential expires: its deadline (start + the crew's execution timeout). */
export function appCredentialExpiry(startTime: string | Date, spec: Pick<CrewSpec, "runner">): Date {
  return new Date(new Date(startTime).getTime() + spec.runner.executionTimeoutSeconds * 1000);
}
