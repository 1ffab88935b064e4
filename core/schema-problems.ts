import type { z } from "zod";

/** A schema's complaints about a value, one line each: where (under `under`, when given) and what is wrong. */
export function schemaProblems(error: z.ZodError, under?: string): string[] {
  return error.issues.map((issue) => {
    const path = [...(under ? [under] : []), ...issue.path.map(String)].join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  });
}
