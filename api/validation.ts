import type { z } from "zod";
import { badRequest } from "./errors.ts";

/** Parses a request part with zod; a mismatch is a 400 whose details name each field and what is wrong with it. */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join(".") : "(body)",
    message: issue.message,
  }));
  throw badRequest(`Invalid ${what}: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details);
}
