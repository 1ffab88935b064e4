import { schemaProblems } from "../schema-problems.ts";
import { celProblem, CelProblem, templateExpressions } from "./cel.ts";
import {
  flowDefinition,
  isRouter,
  isStart,
  outcomesOf,
  type AtomicAction,
  type FlowAction,
  type FlowCondition,
  type FlowDefinition,
} from "./definition.ts";

const BASE_ROOTS = ["state", "outputs"] as const;
const EACH_ROOTS = ["item", "state", "outputs"] as const;

export type FlowJudgement = { ok: true; definition: FlowDefinition } | { ok: false; problems: string[] };

/** A flow document judged whole: its shape, then every problem its shape cannot say, each named by where it is. */
export function judgeFlow(document: unknown): FlowJudgement {
  const parsed = flowDefinition.safeParse(document);
  if (!parsed.success) return { ok: false, problems: schemaProblems(parsed.error) };
  const problems = flowProblems(parsed.data);
  return problems.length ? { ok: false, problems } : { ok: true, definition: parsed.data };
}

/** The names a condition waits for. */
export function conditionEvents(condition: FlowCondition): string[] {
  if (typeof condition === "string") return [condition];
  return ("and" in condition ? condition.and : condition.or).flatMap(conditionEvents);
}

export function flowProblems(definition: FlowDefinition): string[] {
  const problems: string[] = [];
  const methods = Object.entries(definition.methods);
  const names = new Set(methods.map(([name]) => name));
  // Events a listener may wait for: every method's completion and every routing method's outcomes.
  const events = new Set([...names, ...methods.flatMap(([, m]) => (isRouter(m) ? outcomesOf(m) : []))]);

  if (!methods.length) problems.push("methods: the flow has no method");
  else if (!methods.some(([, m]) => m.start === true || (isStart(m) && typeof m.start !== "boolean"))) {
    problems.push("methods: no method is a start method (start: true)");
  }
  for (const [name, method] of methods) {
    const at = `methods.${name}`;
    for (const [field, condition] of [
      ["listen", method.listen],
      ["start", typeof method.start === "boolean" ? undefined : method.start],
    ] as const) {
      if (!condition) continue;
      for (const event of conditionEvents(condition)) {
        if (event === name && field === "listen") {
          problems.push(`${at}.listen: "${name}" is the method itself; it would trigger itself without end`);
        } else if (!events.has(event)) {
          problems.push(`${at}.${field}: "${event}" names no method and no router outcome`);
        }
      }
    }
    if (method.router && !method.human_feedback?.emit?.length && !method.emit?.length) {
      problems.push(`${at}.emit: a router must list the outcomes it may emit`);
    }
    const feedback = method.human_feedback;
    if (feedback?.default_outcome && !feedback.emit?.length) {
      problems.push(`${at}.human_feedback.default_outcome: needs human_feedback.emit`);
    } else if (feedback?.default_outcome && !feedback.emit!.includes(feedback.default_outcome)) {
      problems.push(`${at}.human_feedback.default_outcome: "${feedback.default_outcome}" is not one of its emit`);
    }
    if (isStart(method) === false && !method.listen) {
      problems.push(`${at}: neither a start method nor a listener; it would never run`);
    }
    problems.push(...actionProblems(method.do, `${at}.do`, names, BASE_ROOTS));
  }
  return problems;
}

function actionProblems(
  action: FlowAction,
  at: string,
  methods: Set<string>,
  roots: readonly string[],
  local: Set<string> = new Set(),
): string[] {
  const problems: string[] = [];
  const expression = (source: string, where: string, allowed: readonly string[], steps = local) => {
    const problem = celProblem(source, allowed) ?? outputsProblem(source, methods, steps);
    if (problem) problems.push(`${where}: ${problem} (in ${JSON.stringify(source)})`);
  };
  const template = (value: unknown, where: string) => {
    let sources: string[];
    try {
      sources = templateExpressions(value);
    } catch (error) {
      if (!(error instanceof CelProblem)) throw error;
      problems.push(`${where}: ${error.message}`);
      return;
    }
    for (const source of sources) expression(source, where, roots);
  };
  if (action.call === "each") {
    expression(action.in, `${at}.in`, BASE_ROOTS);
    const steps = new Set<string>();
    for (const [index, step] of action.do.entries()) {
      const where = `${at}.do[${index}]`;
      if (step.if) expression(step.if, `${where}.if`, EACH_ROOTS, steps);
      problems.push(...actionProblems(step.action, `${where}.action`, methods, EACH_ROOTS, new Set(steps)));
      steps.add(step.name);
    }
    return problems;
  }
  const atomic: AtomicAction = action;
  if (atomic.call === "expression") expression(atomic.expr, `${at}.expr`, roots);
  else if (atomic.call === "tool" || atomic.call === "code") template(atomic.with, `${at}.with`);
  else if (atomic.call === "agent") template(atomic.with.input, `${at}.with.input`);
  else if (atomic.call === "crew") {
    template(atomic.with?.inputs, `${at}.with.inputs`);
    template(atomic.inputs, `${at}.inputs`);
  }
  return problems;
}

/** `outputs.x` where x is no method (nor, inside an each, an earlier step). */
function outputsProblem(source: string, methods: Set<string>, local: Set<string>): string | undefined {
  for (const match of source.matchAll(/(?<![\w.])outputs\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) {
    const name = match[1]!;
    if (!methods.has(name) && !local.has(name)) return `outputs.${name} names no method`;
  }
  return undefined;
}
