import type { Request } from "express";
import type { Crew } from "../../core/crew.ts";
import { EXECUTION_ID } from "../../core/execution.ts";
import { principalOf } from "../auth/bearer.ts";
import { mayUseCrew } from "../auth/principal.ts";
import { crewNotFound, executionNotFound, unauthorized } from "../errors.ts";
import type { ExecutionBackend, ExecutionView } from "../execution-backend.ts";
import { mayRead } from "./listings.ts";

/** The crew a request names, and the execution it names, as the caller may see them (else the documented 401/404). */
export interface CrewAccess {
  crewFor(req: Request): Promise<Crew>;
  visibleExecution(req: Request, crew: Crew, id: string): Promise<ExecutionView>;
}

export function crewAccess(backend: ExecutionBackend, crewName: (req: Request) => string | undefined): CrewAccess {
  return {
    /** Unknown crews are 404 to those who may use them, 401 to the others. */
    async crewFor(req) {
      const name = crewName(req);
      const principal = principalOf(req);
      if (!name) throw crewNotFound("(no default crew configured)");
      if (!mayUseCrew(principal, name)) throw unauthorized();
      const crew = await backend.getCrew(name);
      if (!crew) throw crewNotFound(name);
      return crew;
    },
    /** A user token sees only what it started. */
    async visibleExecution(req, crew, id) {
      if (!EXECUTION_ID.test(id)) throw executionNotFound(id);
      const execution = await backend.getExecution(crew.metadata.name, id.toLowerCase());
      if (!execution || !mayRead(principalOf(req), execution)) throw executionNotFound(id);
      return execution;
    },
  };
}
