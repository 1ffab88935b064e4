import type { JsonObject } from "../core/json.ts";
import { compileJsonSchema, type CompiledSchema } from "../core/json-schema.ts";
import type { TaskAssignment, TokenUsage } from "../core/task-assignment.ts";
import { DEFAULT_GUARDRAIL_MAX_RETRIES } from "../core/task-guardrails.ts";
import { cutText } from "../core/task-step.ts";
import type { LlmVerdict } from "./llm-guardrail.ts";
import { readJsonAnswer, readStructuredAnswer } from "./structured-output.ts";

/**
 * The checks of a task's answer, in the order they run after each answer: its `outputJson` (the answer must be a JSON
 * object valid against it), then each of `guardrails[]`, then `guardrail`. The first check that fails ends the round;
 * its reason goes back to the agent, which answers again, up to `guardrailMaxRetries` times, shared by all the checks;
 * the task fails when the last retry's answer fails too. (CrewAI counts retries per guardrail and, given a list,
 * ignores `guardrail`; here every check runs, and the count is the task's, so a task never takes more answers than
 * 1 + guardrailMaxRetries.)
 */

type Check =
  | { kind: "outputJson"; schema: CompiledSchema }
  | { kind: "jsonSchema"; schema: CompiledSchema }
  | { kind: "maxLength"; max: number }
  | { kind: "regex"; pattern: RegExp }
  | { kind: "llm"; rule: string };

export interface AnswerCheck {
  /** Where the check comes from in the crew: `outputJson`, `guardrails[1]`, `guardrail`. */
  field: string;
  /** The check in a few words, for steps and errors: `maxLength 280`, `llm: <rule>`. */
  name: string;
  check: Check;
}

export interface TaskChecks {
  checks: AnswerCheck[];
  maxRetries: number;
  /** The schema of `outputJson`, when the task has one. */
  outputJson?: JsonObject;
}

const RULE_IN_NAME_CHARS = 200;

/** The checks the assignment's task asks for (none: the answer is taken as it is). */
export function taskChecks(task: TaskAssignment["task"]): TaskChecks {
  const checks: AnswerCheck[] = [];
  if (task.outputJson) {
    checks.push({
      field: "outputJson",
      name: "outputJson",
      check: { kind: "outputJson", schema: compileJsonSchema(task.outputJson) },
    });
  }
  for (const [i, g] of (task.guardrails ?? []).entries()) {
    const field = `guardrails[${i}]`;
    if (g.llm !== undefined) {
      checks.push({ field, name: `llm: ${cutText(g.llm, RULE_IN_NAME_CHARS)}`, check: { kind: "llm", rule: g.llm } });
    } else if (g.jsonSchema !== undefined) {
      checks.push({
        field,
        name: "jsonSchema",
        check: { kind: "jsonSchema", schema: compileJsonSchema(g.jsonSchema) },
      });
    } else if (g.maxLength !== undefined) {
      checks.push({ field, name: `maxLength ${g.maxLength}`, check: { kind: "maxLength", max: g.maxLength } });
    } else if (g.regex !== undefined) {
      checks.push({ field, name: `regex ${g.regex}`, check: { kind: "regex", pattern: new RegExp(g.regex) } });
    }
  }
  if (task.guardrail !== undefined) {
    const name = `llm: ${cutText(task.guardrail, RULE_IN_NAME_CHARS)}`;
    checks.push({ field: "guardrail", name, check: { kind: "llm", rule: task.guardrail } });
  }
  return {
    checks,
    maxRetries: task.guardrailMaxRetries ?? DEFAULT_GUARDRAIL_MAX_RETRIES,
    ...(task.outputJson ? { outputJson: task.outputJson } : {}),
  };
}

/** What one check found: passed, or the reason the answer fails it. */
export type CheckResult = { passed: true; reason?: undefined } | { passed: false; reason: string };

/** The answer that passed every check: its text, and its object for a task with outputJson. */
export type Verdict =
  { passed: true; output: string; jsonDict?: JsonObject } | { passed: false; failed: AnswerCheck; reason: string };

export interface CheckDeps {
  /** An LLM guardrail's verdict (runner/llm-guardrail.ts); its tokens are counted by the caller. */
  judge: (rule: string, answer: string) => Promise<LlmVerdict>;
  /** Told about each check as it ends, with when it started. */
  onCheck?: (check: AnswerCheck, result: CheckResult, startedAt: Date, durationMs: number) => void;
  now?: () => number;
  /** Tokens the LLM guardrails spent, added up. */
  onTokens?: (usage: TokenUsage) => void;
}

/** Runs the checks on one answer, in order, until one fails. */
export async function checkAnswer(answer: string, checks: TaskChecks, deps: CheckDeps): Promise<Verdict> {
  const now = deps.now ?? (() => performance.now());
  let output = answer;
  let jsonDict: JsonObject | undefined;
  for (const check of checks.checks) {
    const startedAt = new Date();
    const started = now();
    let result: CheckResult;
    if (check.check.kind === "outputJson") {
      const read = readStructuredAnswer(answer, check.check.schema);
      if (read.errors) {
        result = { passed: false, reason: read.errors.join("; ") };
      } else {
        // Later checks see the object's JSON text, as the task's output will be.
        output = read.text;
        jsonDict = read.object;
        result = { passed: true };
      }
    } else {
      result = await runCheck(check.check, output, deps);
    }
    deps.onCheck?.(check, result, startedAt, Math.max(0, Math.round(now() - started)));
    if (!result.passed) return { passed: false, failed: check, reason: result.reason };
  }
  return { passed: true, output, ...(jsonDict ? { jsonDict } : {}) };
}

async function runCheck(check: Exclude<Check, { kind: "outputJson" }>, answer: string, deps: CheckDeps) {
  switch (check.kind) {
    case "jsonSchema": {
      if (check.schema.problems) return failed(check.schema.problems.join("; "));
      const json = readJsonAnswer(answer);
      if (json.error !== undefined) return failed(json.error);
      const errors = check.schema.validate(json.value);
      return errors.length > 0 ? failed(errors.join("; ")) : PASSED;
    }
    case "maxLength": {
      const length = [...answer].length;
      return length > check.max ? failed(`the answer has ${length} characters, more than ${check.max}`) : PASSED;
    }
    case "regex":
      return check.pattern.test(answer) ? PASSED : failed(`the answer does not match ${String(check.pattern)}`);
    case "llm": {
      const verdict = await deps.judge(check.rule, answer);
      deps.onTokens?.(verdict.tokenUsage);
      return verdict.passed ? PASSED : failed(verdict.reason ?? "the answer does not comply with the rule");
    }
  }
}

const PASSED: CheckResult = { passed: true };
const failed = (reason: string): CheckResult => ({ passed: false, reason });

/** What the agent is told when its answer failed a check: which check, why, and to answer again in full. */
export function retryFeedback(check: AnswerCheck, reason: string): string {
  const what =
    check.check.kind === "outputJson"
      ? "is not valid against the task's JSON Schema"
      : `failed a check (${check.name})`;
  const again =
    check.check.kind === "outputJson"
      ? "Reply again with the whole corrected JSON object, and nothing else."
      : check.check.kind === "jsonSchema"
        ? "Reply again with the whole corrected JSON, and nothing else."
        : "Reply again with the whole corrected answer, in full.";
  return `Your answer ${what}: ${reason}\n\n${again}`;
}

/** The task's error when the answer still fails after every retry. */
export function checksExhausted(check: AnswerCheck, reason: string, retries: number): string {
  const what = check.field === check.name ? check.field : `${check.field} (${check.name})`;
  return `The answer failed ${what} after ${retries} ${retries === 1 ? "retry" : "retries"}: ${reason}`;
}
