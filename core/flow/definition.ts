import { z } from "zod";
import { jsonValue } from "../json.ts";

/**
 * A declarative CrewAI flow (`schema: crewai.flow/v1`), with the keys CrewAI's FlowDefinition gives them, so a user's
 * file needs no change to run here. Only the shape is checked here; what the shape cannot say (a listen naming
 * nothing, a bad CEL expression, …) is problems.ts.
 */

export const FLOW_SCHEMA = "crewai.flow/v1";
/** CrewAI's default bound on the runs of one method in one kickoff. */
export const DEFAULT_MAX_METHOD_CALLS = 100;

/** Method and each-step names: identifiers, as CrewAI requires. */
export const stepName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must match [A-Za-z_][A-Za-z0-9_]*");

/** A trigger: an event name (a method, or a router's outcome), or `{and: […]}` / `{or: […]}` of triggers. */
export type FlowCondition = string | { and: FlowCondition[] } | { or: FlowCondition[] };
export const flowCondition: z.ZodType<FlowCondition> = z.lazy(() =>
  z.union([
    z.string().min(1),
    z.strictObject({ and: z.array(flowCondition).min(1) }),
    z.strictObject({ or: z.array(flowCondition).min(1) }),
  ]),
);

const jsonObject = z.record(z.string(), jsonValue);

const stateDefault = { default: jsonObject.nullish() };
export const flowState = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("dict"), ...stateDefault }),
  z.strictObject({ type: z.literal("json_schema"), json_schema: jsonObject, ...stateDefault }),
  z.strictObject({
    type: z.literal("pydantic"),
    ref: z.string().nullish(),
    json_schema: jsonObject.nullish(),
    ...stateDefault,
  }),
  z.strictObject({ type: z.literal("unknown"), ref: z.string().nullish(), ...stateDefault }),
]);
export type FlowState = z.infer<typeof flowState>;

/** A value whose strings may hold `${…}` CEL expressions. */
const mapping = z.record(z.string(), jsonValue);

const codeAction = z.strictObject({ call: z.literal("code"), ref: z.string(), with: mapping.nullish() });
const scriptAction = z.strictObject({
  call: z.literal("script"),
  code: z.string(),
  language: z.literal("python").optional(),
});
const toolAction = z.strictObject({ call: z.literal("tool"), ref: z.string().min(1), with: mapping.nullish() });
/** The inline crew is CrewAI's CrewDefinition: the crew import (core/crewai-import/) judges its fields. */
const crewAction = z
  .strictObject({
    call: z.literal("crew"),
    from_declaration: z.string().nullish(),
    with: z.looseObject({ inputs: mapping.optional() }).nullish(),
    inputs: mapping.nullish(),
  })
  .refine((a) => Boolean(a.from_declaration) !== Boolean(a.with), {
    message: "a crew action needs exactly one of from_declaration or with",
  });
/** The agent is CrewAI's AgentDefinition, with `input` (a mapping value) what it is asked. */
const agentAction = z.strictObject({
  call: z.literal("agent"),
  with: z.looseObject({ role: z.string(), goal: z.string(), backstory: z.string(), input: jsonValue.optional() }),
});
const expressionAction = z.strictObject({ call: z.literal("expression"), expr: z.string().min(1) });

export const atomicAction = z.discriminatedUnion("call", [
  codeAction,
  toolAction,
  crewAction,
  agentAction,
  expressionAction,
  scriptAction,
]);
export type AtomicAction = z.infer<typeof atomicAction>;

export const eachStep = z.strictObject({ name: stepName, if: z.string().nullish(), action: atomicAction });
export type EachStep = z.infer<typeof eachStep>;

const eachAction = z.strictObject({
  call: z.literal("each"),
  in: z.string().min(1),
  do: z
    .array(eachStep)
    .min(1, "each.do needs at least one step")
    .refine((steps) => new Set(steps.map((s) => s.name)).size === steps.length, "each.do's step names must differ"),
});

export const flowAction = z.union([eachAction, atomicAction]);
export type FlowAction = z.infer<typeof flowAction>;
export type EachAction = z.infer<typeof eachAction>;

export const humanFeedback = z.looseObject({
  message: z.string(),
  emit: z.array(z.string().min(1)).nullish(),
  default_outcome: z.string().nullish(),
  llm: jsonValue.optional(),
  metadata: jsonObject.nullish(),
});
export type HumanFeedback = z.infer<typeof humanFeedback>;

export const flowMethod = z.looseObject({
  description: z.string().nullish(),
  do: flowAction,
  start: z.union([z.boolean(), flowCondition]).nullish(),
  listen: flowCondition.nullish(),
  router: z.boolean().optional(),
  emit: z.array(z.string().min(1)).nullish(),
  human_feedback: humanFeedback.nullish(),
  persist: jsonValue.optional(),
});
export type FlowMethod = z.infer<typeof flowMethod>;

export const flowConfig = z.looseObject({
  max_method_calls: z.number().int().min(1).optional(),
});

export const flowDefinition = z.looseObject({
  schema: z.literal(FLOW_SCHEMA).default(FLOW_SCHEMA),
  name: z.string().min(1),
  description: z.string().nullish(),
  state: flowState.nullish(),
  config: flowConfig.optional(),
  persist: jsonValue.optional(),
  methods: z.record(stepName, flowMethod).default({}),
});
export type FlowDefinition = z.infer<typeof flowDefinition>;

/** Whether the method runs at kickoff (a condition, like CrewAI's conditional start, waits for its events). */
export function isStart(method: FlowMethod): boolean {
  return Boolean(method.start);
}

/** A method whose output is an event: a router, or a human_feedback with outcomes (CrewAI treats it as a router). */
export function isRouter(method: FlowMethod): boolean {
  return Boolean(method.router) || Boolean(method.human_feedback?.emit?.length);
}

/** The outcomes a routing method may give. */
export function outcomesOf(method: FlowMethod): string[] {
  return method.human_feedback?.emit?.length ? method.human_feedback.emit : (method.emit ?? []);
}

export function maxMethodCalls(definition: FlowDefinition): number {
  return definition.config?.max_method_calls ?? DEFAULT_MAX_METHOD_CALLS;
}
