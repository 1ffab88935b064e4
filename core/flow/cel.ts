import { Environment, type ASTNode } from "@marcbachmann/cel-js";
import type { Json } from "../json.ts";
import { KubecrewError } from "../errors.ts";

/**
 * CEL as a flow uses it: `call: expression`, `each.in`, a step's `if`, and the `${…}` parts of action mappings. The
 * expressions read `state` and `outputs` (and `item` inside an `each`); `now()` is the kickoff's time, frozen for the
 * run. Values go in as JSON (whole numbers as CEL ints) and come out as JSON.
 */

export class CelProblem extends KubecrewError {
  readonly code = "invalid_expression";
}

/** Macros whose first argument binds a local name (not a root the expression reads). */
const BINDING_MACROS = new Set(["all", "exists", "exists_one", "filter", "map"]);

function environment(now: Date): Environment {
  return new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false })
    .registerFunction("now(): google.protobuf.Timestamp", () => now)
    .registerFunction("string(google.protobuf.Timestamp): string", (t: Date) => t.toISOString());
}

/** One environment for checking only: the time does not matter there. */
const checking = environment(new Date(0));

/** The roots an expression reads (`state`, `outputs`, …), names bound by macros left out. */
function rootsOf(node: ASTNode, bound: Set<string>, roots: Set<string>): void {
  const { op, args } = node as { op: string; args: unknown };
  if (op === "id") {
    if (typeof args === "string" && !bound.has(args)) roots.add(args);
    return;
  }
  if (op === "rcall" && Array.isArray(args) && BINDING_MACROS.has(args[0] as string)) {
    const [, receiver, macroArgs] = args as [string, ASTNode, ASTNode[]];
    rootsOf(receiver, bound, roots);
    const binding = macroArgs[0] as { op: string; args: unknown } | undefined;
    const inner = new Set(bound);
    if (binding?.op === "id" && typeof binding.args === "string") inner.add(binding.args);
    for (const arg of macroArgs.slice(1)) rootsOf(arg, inner, roots);
    return;
  }
  visit(args, (child) => rootsOf(child, bound, roots));
}

function visit(value: unknown, each: (node: ASTNode) => void): void {
  if (Array.isArray(value)) for (const item of value) visit(item, each);
  else if (value && typeof value === "object" && "op" in value) each(value as ASTNode);
}

/** The problem of an expression (a syntax error, or a root it may not read), or undefined. */
export function celProblem(source: string, allowedRoots: readonly string[]): string | undefined {
  let ast: ASTNode;
  try {
    ast = checking.parse(source).ast;
  } catch (error) {
    return firstLine(error);
  }
  const roots = new Set<string>();
  rootsOf(ast, new Set(), roots);
  const unknown = [...roots].filter((root) => !allowedRoots.includes(root));
  return unknown.length
    ? `reads ${unknown.map((r) => `"${r}"`).join(", ")}; it may read only ${allowedRoots.join(", ")}`
    : undefined;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim();
}

/** JSON in: whole numbers become CEL ints, as a JSON decoder in CEL does for integers. */
function toCel(value: unknown): unknown {
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  if (Array.isArray(value)) return value.map(toCel);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toCel(v)]));
  }
  return value;
}

/** CEL out as JSON: ints as numbers, timestamps as ISO text, maps as objects. */
export function fromCel(value: unknown): Json {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), fromCel(v)]));
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromCel(v)]));
  }
  if (value === undefined) return null;
  return value as Json;
}

export type CelContext = Record<string, unknown>;

/**
 * The environments of the runs' kickoff times, kept a while: a look at an `each` evaluates its list and each started
 * item's step on every item event, and an environment is costly to build (its functions registered, each time).
 */
const environments = new Map<number, Environment>();
const KEPT_ENVIRONMENTS = 64;

function environmentAt(now: Date): Environment {
  let held = environments.get(now.getTime());
  if (!held) {
    if (environments.size >= KEPT_ENVIRONMENTS) environments.delete(environments.keys().next().value!);
    environments.set(now.getTime(), (held = environment(now)));
  }
  return held;
}

export function evaluateCel(source: string, context: CelContext, now: Date): Json {
  try {
    return fromCel(environmentAt(now).evaluate(source, toCel(context) as Record<string, unknown>));
  } catch (error) {
    throw new CelProblem(`${source}: ${firstLine(error)}`);
  }
}

/** The `${…}` parts of a string, and the text between them. */
export function templateParts(value: string): ({ text: string } | { expr: string })[] {
  const parts: ({ text: string } | { expr: string })[] = [];
  let index = 0;
  for (let start = value.indexOf("${", index); start !== -1; start = value.indexOf("${", index)) {
    if (start > index) parts.push({ text: value.slice(index, start) });
    const end = expressionEnd(value, start + 2);
    if (end === -1) throw new CelProblem(`an unclosed \${ in ${JSON.stringify(value)}`);
    const expr = value.slice(start + 2, end).trim();
    if (!expr) throw new CelProblem(`an empty \${} in ${JSON.stringify(value)}`);
    parts.push({ expr });
    index = end + 1;
  }
  if (index < value.length) parts.push({ text: value.slice(index) });
  return parts;
}

/** The `}` closing an expression: braces of CEL maps and braces inside CEL strings do not close it. */
function expressionEnd(value: string, from: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < value.length; i++) {
    const c = value[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "{") depth++;
    else if (c === "}") {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Every expression of a mapping value (strings, inside objects and lists). */
export function templateExpressions(value: unknown): string[] {
  if (typeof value === "string") return templateParts(value).flatMap((p) => ("expr" in p ? [p.expr] : []));
  if (Array.isArray(value)) return value.flatMap(templateExpressions);
  if (value && typeof value === "object") return Object.values(value).flatMap(templateExpressions);
  return [];
}

/**
 * A mapping value with its `${…}` filled in. A string that is one expression alone keeps the value's type; text
 * around expressions makes text, other values written as JSON and null as nothing (CrewAI's rule).
 */
export function renderTemplate(value: Json | undefined, context: CelContext, now: Date): Json {
  if (value === undefined) return null;
  if (typeof value === "string") {
    const parts = templateParts(value);
    const expressions = parts.filter((p) => "expr" in p);
    if (!expressions.length) return value;
    if (expressions.length === 1 && parts.every((p) => "expr" in p || !p.text.trim())) {
      return evaluateCel((expressions[0] as { expr: string }).expr, context, now);
    }
    return parts
      .map((p) => {
        if ("text" in p) return p.text;
        const result = evaluateCel(p.expr, context, now);
        return result === null ? "" : typeof result === "string" ? result : JSON.stringify(result);
      })
      .join("");
  }
  if (Array.isArray(value)) return value.map((v) => renderTemplate(v, context, now));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, context, now)]));
  }
  return value;
}
