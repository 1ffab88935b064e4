import { isUnset, type FieldRule } from "./field-rules.ts";
import type { Findings } from "./findings.ts";

/**
 * Judges the fields an importer does not carry, by their rules: a value that asks for nothing passes, a note is
 * recorded, an unsupported value is a problem with its advice, and a field CrewAI does not know is a problem too (as
 * CrewAI's own loader refuses it). `where(field)` names the field in the lines.
 */
export function judgeFields(
  fields: Record<string, unknown>,
  rules: Record<string, FieldRule>,
  what: string,
  where: (field: string) => string,
  findings: Findings,
  extra: readonly string[] = [],
): void {
  for (const [field, value] of Object.entries(fields)) {
    if (extra.includes(field)) continue;
    const rule = rules[field];
    if (!rule) {
      findings.problem(where(field), `CrewAI's ${what} has no such field`);
      continue;
    }
    if (rule.carried || (rule.inert ?? isUnset)(value)) continue;
    if (rule.note) findings.note(where(field), rule.note);
    else findings.problem(where(field), rule.advice ?? "kubecrew cannot honour it");
  }
}

/** CrewAI's Python reference: `{"python": "module.attribute"}`. */
export function isPythonReference(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && "python" in value;
}
