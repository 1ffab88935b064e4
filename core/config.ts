import { z } from "zod";
import { KubecrewError } from "./errors.ts";

/**
 * The one configuration convention of every component: its config object described once, each field beside the
 * variable that fills it (`variable(NAME, schema)`, the schema carrying its meaning, default and check), and
 * configSchema() making of that one zod schema over the environment whose output is the config object. It is parsed
 * once at start-up (parseConfig); a bad value is a ConfigError naming the variable; the command prints one line and
 * exits with status 1 (configOrExit). hack/generate-config-docs.ts documents the same schemas.
 */

/** A configuration mistake: the variable and what is wrong with it, as one line. */
export class ConfigError extends KubecrewError {
  override name = "ConfigError";
  readonly code = "invalid_configuration";
  readonly variable: string;

  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable}: ${problem}`);
    this.variable = variable;
  }
}

/** The log levels of every component (LOG_LEVEL, and the runner's level the controller hands its pods). */
export const logLevel = z
  .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
  .default("info")
  .describe("The log level: trace, debug, info, warn, error, fatal or silent.");
export type LogLevel = z.infer<typeof logLevel>;

/** Parses the environment once into a typed config; a bad value throws ConfigError naming the variable. */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const name = issue.path.join(".") || "(environment)";
  // Zod's "expected string, received undefined" says nothing useful to an operator.
  const missing = issue.path.length === 1 && env[String(issue.path[0])] === undefined;
  const problem =
    !missing || issue.message.startsWith("is required")
      ? issue.message
      : issue.message.startsWith("Invalid input")
        ? "is required"
        : `is required and ${issue.message}`;
  throw new ConfigError(name, problem);
}

/**
 * The one way a command stops on a configuration mistake: `kubecrew <command>: <the ConfigError's line>` on stderr,
 * exit status 1. Any other error is thrown on.
 */
export function configOrExit<T>(command: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`kubecrew ${command}: ${err.message}\n`);
    process.exit(1);
  }
}

/** One environment variable, as the field of a config object it fills: its name and its schema. */
export class Variable<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly schema: S;

  constructor(name: string, schema: S) {
    this.name = name;
    this.schema = schema;
  }
}

/**
 * A part of a config built from variables of its own by a function: a group several components share (the outbound
 * policy, connected apps) or a value computed from several variables. `env` is the whole environment, parsed.
 */
export class Derived<F extends Fields = Fields, R = unknown> {
  readonly fields: F;
  readonly build: Build<F, R>;

  constructor(fields: F, build: Build<F, R>) {
    this.fields = fields;
    this.build = build;
  }
}

/** A method's type, so that a Derived of any fields is a Derived<Fields> (method parameters are compared both ways). */
type Build<F extends Fields, R> = {
  method(values: ConfigOf<F>, env: Record<string, unknown>): R;
}["method"];

/** The fields of a config object: each a variable, a derived part, or a nested object of fields. */
export interface Fields {
  readonly [field: string]: Variable | Derived<Fields, unknown> | Fields;
}

/** The field filled by the environment variable `name`, as `schema` parses it. */
export const variable = <S extends z.ZodType>(name: string, schema: S): Variable<S> => new Variable(name, schema);

/** A field computed by `build` from `fields` (and, where a module reads variables named at run time, `env`). */
export const derived = <F extends Fields, R>(
  fields: F,
  build: (values: ConfigOf<F>, env: Record<string, unknown>) => R,
): Derived<F, R> => new Derived(fields, build);

type ValueOf<F> =
  F extends Variable<infer S>
    ? z.output<S>
    : F extends Derived<Fields, infer R>
      ? R
      : F extends Fields
        ? ConfigOf<F>
        : never;
type OptionalKeys<F> = { [K in keyof F]: undefined extends ValueOf<F[K]> ? K : never }[keyof F];
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The config object `fields` describe: a field that may be unset is optional. */
export type ConfigOf<F extends Fields> = Flat<
  { [K in Exclude<keyof F, OptionalKeys<F>>]: ValueOf<F[K]> } & { [K in OptionalKeys<F>]?: ValueOf<F[K]> }
>;

/** Every variable of `fields`, by name; one name stands for one schema (a shared Variable may appear twice). */
function variablesIn(fields: Fields, into = new Map<string, z.ZodType>()): Map<string, z.ZodType> {
  for (const field of Object.values(fields)) {
    if (field instanceof Variable) {
      const known = into.get(field.name);
      if (known && known !== field.schema) throw new Error(`${field.name} is declared twice with different schemas`);
      into.set(field.name, field.schema);
    } else variablesIn(field instanceof Derived ? field.fields : field, into);
  }
  return into;
}

function valuesOf(fields: Fields, env: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(fields)) {
    const value =
      field instanceof Variable
        ? env[field.name]
        : field instanceof Derived
          ? field.build(valuesOf(field.fields, env) as never, env)
          : valuesOf(field, env);
    // An unset variable leaves its field out, as a hand-built object would.
    if (value !== undefined) values[key] = value;
  }
  return values;
}

/**
 * The zod schema over the environment that `fields` describe: its shape is the variables (by name, for parseConfig's
 * messages and the docs), its output the config object. Unknown variables pass through to derived parts' `env`.
 */
export function configSchema<F extends Fields>(fields: F) {
  const shape = Object.fromEntries(variablesIn(fields));
  return z
    .object(shape)
    .loose()
    .transform((env) => valuesOf(fields, env) as ConfigOf<F>);
}
