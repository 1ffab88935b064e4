/**
 * The reference table of docs/configuration.md, from the components' zod schemas: each variable's name, the
 * components that read it, its default and its meaning, as the schemas say them (`.describe()`, or
 * `.meta({description, defaultText})` where the default is computed at start-up).
 */
import type { z } from "zod";

/** A component and the schemas of the variables it reads. */
export interface ComponentVariables {
  component: string;
  /** The section's heading. */
  title: string;
  schemas: z.ZodType[];
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  defaultValue?: unknown;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;
const metaOf = (schema: z.ZodType) =>
  (schema.meta() ?? {}) as { description?: string; defaultText?: string } | Record<string, never>;

/** The object of environment variables a schema parses (through its transforms). */
export function variablesOf(schema: z.ZodType): Record<string, z.ZodType> {
  const def = defOf(schema);
  if (def.type === "object") return def.shape!;
  if (def.type === "pipe") return variablesOf(def.in!);
  throw new Error(`not a schema over the environment: ${def.type}`);
}

export interface Variable {
  description?: string;
  /** Its default as the docs show it; "required", or "" when unset is a valid choice. */
  default: string;
}

/** One variable's meaning and default, looking through optional, default and pipe wrappers. */
export function describeVariable(schema: z.ZodType): Variable {
  let description: string | undefined;
  let defaultText: string | undefined;
  let current: z.ZodType | undefined = schema;
  let optional = false;
  let defaultValue: unknown;
  while (current) {
    const meta = metaOf(current);
    description ??= meta.description;
    defaultText ??= meta.defaultText;
    const def = defOf(current);
    if (def.type === "default" || def.type === "prefault") {
      if (defaultValue === undefined) defaultValue = def.defaultValue;
      current = def.innerType;
    } else if (def.type === "optional") {
      optional = true;
      current = def.innerType;
    } else if (def.type === "pipe") {
      // A preprocess is a pipe out of a transform: the checks (and any default) are after it.
      current = defOf(def.in!).type === "transform" ? def.out : def.in;
    } else current = undefined;
  }
  const shown = defaultText ?? (defaultValue !== undefined ? formatDefault(defaultValue) : optional ? "" : "required");
  return { ...(description ? { description } : {}), default: shown };
}

function formatDefault(value: unknown): string {
  if (value === "") return '`""`';
  if (Array.isArray(value)) return value.length ? `\`${value.join(",")}\`` : '`""`';
  return `\`${String(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** Every variable a component reads, by name, from the first of its schemas that has it. */
export function componentVariables({ schemas }: ComponentVariables): Map<string, Variable> {
  const variables = new Map<string, Variable>();
  for (const schema of schemas) {
    for (const [name, variable] of Object.entries(variablesOf(schema))) {
      if (!variables.has(name)) variables.set(name, describeVariable(variable));
    }
  }
  return variables;
}

/**
 * The Markdown reference: a section per component, a table of what it reads in name order (a variable read by several
 * components is in each one's table, with that component's default and meaning).
 */
export function configReference(components: ComponentVariables[]): string {
  const lines: string[] = [];
  for (const entry of components) {
    const variables = componentVariables(entry);
    lines.push(`## ${entry.title}`, "", "| variable | default | meaning |", "| --- | --- | --- |");
    for (const name of [...variables.keys()].sort()) {
      const { description, default: shown } = variables.get(name)!;
      if (!description) throw new Error(`${name} (${entry.component}) has no description: .describe() it`);
      lines.push(`| \`${name}\` | ${cell(shown)} | ${cell(description)} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}
