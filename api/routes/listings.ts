import type { Crew } from "../../core/crew.ts";
import { discoverInputs } from "../../core/inputs.ts";
import { statusResponse } from "../../core/status-view.ts";
import type { Principal } from "../auth/principal.ts";
import type { ExecutionView } from "../execution-backend.ts";
import type { CrewSummary, ExecutionSummary } from "./listing-bodies.ts";

/** The most executions `GET /executions` lists. */
export const EXECUTIONS_LISTED = 100;

/** A crew as the console shows it: every input it needs (declared and discovered), its agents and tasks. */
export function crewSummary(crew: Crew): CrewSummary {
  const declared = new Map(crew.spec.inputs.map((input) => [input.name, input]));
  return {
    name: crew.metadata.name,
    ...(crew.spec.description ? { description: crew.spec.description } : {}),
    inputs: discoverInputs(crew.spec).map((name) => {
      const input = declared.get(name);
      return {
        name,
        ...(input?.description ? { description: input.description } : {}),
        required: input ? input.required && input.default === undefined : true,
      };
    }),
    agents: crew.spec.agents.map((a) => ({ name: a.name, role: a.role, goal: a.goal })),
    tasks: crew.spec.tasks.map((t) => ({
      name: t.name,
      description: t.description,
      expected_output: t.expectedOutput,
      ...(t.agent !== undefined ? { agent: t.agent } : {}),
    })),
  };
}

/** Whether the caller may see the execution: a user token (or user session) sees only what it started. */
export function mayRead(principal: Principal, execution: ExecutionView): boolean {
  return principal.kind !== "user" || execution.requestedBy?.subject === principal.subject;
}

/** One line of a crew's execution list: the status without the outputs, with who started it and when. */
export function executionSummary(execution: ExecutionView, crew: Crew): ExecutionSummary {
  const spec = execution.status?.crewSpec ?? crew.spec;
  const view = statusResponse(execution.status, execution.results, spec.tasks[0]!.name, spec.tasks.length);
  const tasks = execution.status?.tasks ?? [];
  return {
    kickoff_id: execution.id,
    ...(execution.created ? { created: execution.created } : {}),
    ...(execution.requestedBy
      ? { requested_by: { kind: execution.requestedBy.kind, subject: execution.requestedBy.subject } }
      : {}),
    status: view.status,
    state: view.state,
    ...(view.status === "running" ? { current_task: view.current_task } : {}),
    progress: {
      completed_tasks: tasks.filter((t) => t.phase === "Succeeded").length,
      total_tasks: spec.tasks.length,
    },
    ...(view.status === "error" ? { error: view.error } : {}),
    ...(view.status !== "running" ? { execution_time: view.execution_time } : {}),
  };
}
