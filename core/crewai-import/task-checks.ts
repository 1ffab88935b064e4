import type { JsonObject } from "../json.ts";
import { MAX_GUARDRAIL_RETRIES } from "../task-guardrails.ts";
import { isPythonReference } from "./apply-rules.ts";
import { CREWAI_RUNTIME, PYTHON } from "./field-rules.ts";
import type { Findings } from "./findings.ts";

/** What a CrewAI task's structured output and guardrails become on a Crew's task. */
export interface TaskChecks {
  outputJson?: JsonObject;
  guardrail?: string;
  guardrails?: { llm: string }[];
  guardrailMaxRetries?: number;
}

const OUTPUT_FIELDS = ["output_json", "output_pydantic", "response_model"] as const;

/**
 * CrewAI's output_json, output_pydantic and response_model, written as a JSON Schema, become the task's outputJson
 * (kubecrew reports the object as json_dict whichever it was); a Python model is refused. `guardrail` and each of
 * `guardrails` in words become LLM rules; a Python function is refused. As in CrewAI, `guardrails` set means
 * `guardrail` is not checked; guardrail_max_retries (or its old name max_retries) bounds the retries of them all.
 */
export function taskChecksFromCrewAI(
  fields: Record<string, unknown>,
  at: (field: string) => string,
  findings: Findings,
): TaskChecks {
  const checks: TaskChecks = {};
  if (fields.output_json && fields.output_pydantic) {
    findings.problem(at("output_pydantic"), "a task has one structured output: output_json or output_pydantic");
  }
  for (const field of OUTPUT_FIELDS) {
    const value = fields[field];
    if (value === undefined || value === null) continue;
    if (isPythonReference(value) || typeof value === "string") {
      findings.problem(
        at(field),
        `a Python model, which the kubecrew runtime cannot load: write its JSON Schema here instead, ${CREWAI_RUNTIME}`,
      );
    } else if (typeof value !== "object" || Array.isArray(value)) {
      findings.problem(at(field), "must be a JSON Schema or a Python model");
    } else if (checks.outputJson && JSON.stringify(checks.outputJson) !== JSON.stringify(value)) {
      findings.problem(at(field), "a second structured output: kubecrew gives a task one (outputJson); keep one");
    } else {
      checks.outputJson = value as JsonObject;
      if (field === "output_pydantic") findings.note(at(field), "kubecrew reports the object as json_dict");
    }
  }

  const rule = (value: unknown, where: string): string | undefined => {
    if (typeof value === "string" && value.trim()) return value;
    findings.problem(
      where,
      isPythonReference(value) ? `a Python guardrail function: ${PYTHON}` : "must be a rule in words",
    );
    return undefined;
  };
  const list = fields.guardrails;
  if (list !== undefined && list !== null && !(Array.isArray(list) && list.length === 0)) {
    const rules = (Array.isArray(list) ? list : [list]).map((g, i) =>
      rule(g, Array.isArray(list) ? `${at("guardrails")}[${i}]` : at("guardrails")),
    );
    if (rules.every((r) => r !== undefined)) checks.guardrails = rules.map((llm) => ({ llm: llm! }));
    if (fields.guardrail !== undefined && fields.guardrail !== null) {
      findings.note(
        at("guardrail"),
        "not checked: CrewAI checks only guardrails when both are set, and so does the import",
      );
    }
  } else if (fields.guardrail !== undefined && fields.guardrail !== null) {
    const single = rule(fields.guardrail, at("guardrail"));
    if (single !== undefined) checks.guardrail = single;
  }

  const retriesField = fields.guardrail_max_retries !== undefined ? "guardrail_max_retries" : "max_retries";
  const retries = fields[retriesField];
  const checked = checks.outputJson || checks.guardrail || checks.guardrails;
  if (checked && retries !== undefined && retries !== null) {
    if (typeof retries !== "number" || !Number.isInteger(retries) || retries < 0) {
      findings.problem(at(retriesField), "must be a whole number, 0 or more");
    } else if (retries > MAX_GUARDRAIL_RETRIES) {
      findings.problem(at(retriesField), `kubecrew retries a task's checks at most ${MAX_GUARDRAIL_RETRIES} times`);
    } else checks.guardrailMaxRetries = retries;
  }
  return checks;
}
