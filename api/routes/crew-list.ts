import { Router } from "express";
import { bearerAuth, principalOf } from "../auth/bearer.ts";
import { mayUseCrew } from "../auth/principal.ts";
import type { SessionAuth } from "../auth/session-auth.ts";
import type { TokenStore } from "../auth/token-store.ts";
import type { ExecutionBackend } from "../execution-backend.ts";
import { refuseWrongMethods } from "../../platform/http/wrong-methods.ts";
import { crewSummary } from "./listings.ts";

/** `GET /crews`: the crews the caller may use, each with its description, inputs, agents and tasks. */
export function crewListRoutes(deps: { backend: ExecutionBackend; tokens: TokenStore; sessions?: SessionAuth }) {
  const router = Router();
  router.get("/crews", bearerAuth(deps.tokens, deps.sessions), async (req, res) => {
    const principal = principalOf(req);
    const crews = (await deps.backend.listCrews())
      .filter((crew) => mayUseCrew(principal, crew.metadata.name))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    res.json({ crews: crews.map(crewSummary) });
  });
  refuseWrongMethods(router);
  return router;
}
