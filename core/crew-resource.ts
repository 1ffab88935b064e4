import { crewShape, crewSpecShape } from "./crew.ts";
import { crewSpecProblems } from "./crew-problems.ts";

/**
 * The Crew resource as kubecrew accepts it: its spec checked field by field (core/crew.ts) and across fields
 * (core/crew-problems.ts). Every reader of a Crew someone wrote parses it with these; their types are core/crew.ts's.
 */

export const crewSpec = crewSpecShape.superRefine((spec, ctx) => {
  for (const message of crewSpecProblems(spec)) ctx.addIssue({ code: "custom", message });
});

export const crew = crewShape.extend({ spec: crewSpec });
