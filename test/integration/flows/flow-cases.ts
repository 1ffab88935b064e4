/**
 * The table of declarative flows (crewai.flow/v1) the comparison tests run in CrewAI's own runtime and in kubecrew:
 * each with its kickoff inputs, the model's scripted answers (served in order by the OpenAI-compatible fixture) and
 * the answers a person gives a human_feedback. Written here, never copied from CrewAI.
 */

export interface FlowCase {
  name: string;
  definition: Record<string, unknown>;
  inputs?: Record<string, unknown>;
  /** The model's answers, in the order the flow asks (one method at a time where a case asks more than once). */
  answers?: string[];
  /** A person's answers to human_feedback, in order ("" is no answer: default_outcome). */
  feedback?: string[];
  /**
   * CrewAI's model summing each non-empty feedback up to one of `emit` (its own runtime asks; kubecrew takes the
   * outcome the feedback's words name): the answer that outcome.
   */
  collapse?: string[];
}

const expression = (expr: string) => ({ call: "expression", expr });
const agent = (role: string, input: string) => ({
  call: "agent",
  with: { role, goal: `Answer as the ${role}`, backstory: `A careful ${role}.`, input },
});
const flow = (name: string, methods: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  schema: "crewai.flow/v1",
  name,
  ...extra,
  methods,
});

export const runnableCases: FlowCase[] = [
  {
    name: "a router whose agent picks an outcome",
    definition: flow(
      "RouterFlow",
      {
        draft: { start: true, do: expression("'a draft about ' + state.topic") },
        route: {
          listen: "draft",
          router: true,
          emit: ["publish", "revise"],
          do: agent("editor", "Publish or revise? ${outputs.draft}"),
        },
        publish_it: { listen: "publish", do: expression("outputs.draft + ' (published)'") },
        revise_it: { listen: "revise", do: expression("'revised'") },
      },
      {
        state: {
          type: "json_schema",
          json_schema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
        },
      },
    ),
    inputs: { topic: "tide pools" },
    answers: ["revise"],
  },
  {
    name: "and and or listens after two start methods",
    definition: flow("JoinFlow", {
      left: { start: true, do: expression("'L'") },
      right: { start: true, do: expression("'R'") },
      both: { listen: { and: ["left", "right"] }, do: expression("outputs.left + outputs.right") },
      either: { listen: { or: ["left", "right"] }, do: expression("'first'") },
      last: { listen: { and: ["both", "either"] }, do: expression("outputs.both + '+' + outputs.either") },
    }),
  },
  {
    name: "each over a list with a conditional step",
    definition: flow(
      "EachFlow",
      {
        fan: {
          start: true,
          do: {
            call: "each",
            in: "state.items",
            do: [
              { name: "double", action: expression("item * 2") },
              { name: "big", if: "outputs.double > 4", action: expression("'big ' + string(outputs.double)") },
            ],
          },
        },
        count: { listen: "fan", do: expression("size(outputs.fan)") },
      },
      { state: { type: "dict", default: { items: [1, 2, 3, 4] } } },
    ),
  },
  {
    name: "human_feedback with emit: the outcome chosen from the feedback",
    definition: flow("ReviewFlow", {
      draft: {
        start: true,
        do: expression("'the draft'"),
        human_feedback: { message: "Ship it?", emit: ["approved", "rejected"], default_outcome: "approved" },
      },
      ship: { listen: "approved", do: expression("'shipped'") },
      redo: { listen: "rejected", do: expression("'redo after: ' + outputs.draft.feedback") },
    }),
    feedback: ["Rejected: the title needs work"],
    collapse: ['{"outcome": "rejected"}'],
  },
  {
    name: "human_feedback with no answer: default_outcome",
    definition: flow("DefaultFlow", {
      draft: {
        start: true,
        do: expression("'the draft'"),
        human_feedback: { message: "Ship it?", emit: ["approved", "rejected"], default_outcome: "approved" },
      },
      ship: { listen: "approved", do: expression("'shipped: ' + outputs.draft.outcome") },
      redo: { listen: "rejected", do: expression("'redo'") },
    }),
    feedback: [""],
  },
  {
    name: "a cycle bounded by max_method_calls",
    definition: flow(
      "LoopFlow",
      {
        begin: { start: true, do: expression("'go'") },
        spin: { listen: { or: ["begin", "again"] }, router: true, emit: ["again"], do: expression("'again'") },
      },
      { config: { max_method_calls: 3 } },
    ),
  },
];

/** Definitions both CrewAI's FlowDefinition and kubecrew refuse, with where kubecrew's problem must point. */
export const refusedCases: { name: string; definition: Record<string, unknown>; at: string }[] = [
  {
    name: "bad CEL in an expression",
    definition: flow("Bad", { a: { start: true, do: expression("state.topic +") } }),
    at: "methods.a.do.expr",
  },
  {
    name: "bad CEL in a ${…} mapping",
    definition: flow("Bad", { a: { start: true, do: agent("writer", "${state.(}") } }),
    at: "methods.a.do.with.input",
  },
  {
    name: "a CEL root that is neither state nor outputs",
    definition: flow("Bad", { a: { start: true, do: expression("secrets.key") } }),
    at: "methods.a.do.expr",
  },
  {
    name: "a method listening to itself",
    definition: flow("Bad", { a: { start: true, do: expression("1") }, b: { listen: "b", do: expression("2") } }),
    at: "methods.b.listen",
  },
  {
    name: "a method name that is no identifier",
    definition: flow("Bad", { "bad-name": { start: true, do: expression("1") } }),
    at: "methods",
  },
  {
    name: "a crew action with both from_declaration and with",
    definition: flow("Bad", {
      a: { start: true, do: { call: "crew", from_declaration: "crew.yaml", with: { agents: {}, tasks: [] } } },
    }),
    at: "methods.a.do",
  },
  {
    name: "an action CrewAI does not know",
    definition: flow("Bad", { a: { start: true, do: { call: "shell", cmd: "ls" } } }),
    at: "methods.a.do",
  },
  {
    name: "another schema version",
    definition: { schema: "crewai.flow/v2", name: "Bad", methods: { a: { start: true, do: expression("1") } } },
    at: "schema",
  },
];

/**
 * Definitions CrewAI loads but kubecrew refuses on apply, each problem named: they could never run as written
 * (a listen or an outputs.x naming nothing, a router without emit, no start method, a default_outcome outside emit).
 */
export const stricterCases: { name: string; definition: Record<string, unknown>; at: string }[] = [
  {
    name: "a listen naming nothing",
    definition: flow("Bad", { a: { start: true, do: expression("1") }, b: { listen: "nowhere", do: expression("2") } }),
    at: "methods.b.listen",
  },
  {
    name: "outputs.x naming no method",
    definition: flow("Bad", { a: { start: true, do: expression("outputs.nowhere") } }),
    at: "methods.a.do.expr",
  },
  {
    name: "a router without emit",
    definition: flow("Bad", { a: { start: true, router: true, do: expression("'x'") } }),
    at: "methods.a.emit",
  },
  {
    name: "no start method",
    definition: flow("Bad", { a: { listen: "b", do: expression("1") }, b: { listen: "a", do: expression("2") } }),
    at: "methods",
  },
  {
    name: "a default_outcome outside emit",
    definition: flow("Bad", {
      a: {
        start: true,
        do: expression("1"),
        human_feedback: { message: "ok?", emit: ["yes", "no"], default_outcome: "maybe" },
      },
    }),
    at: "methods.a.human_feedback.default_outcome",
  },
];

/**
 * Definitions with kubecrew's tool refs (http_request, an MCP server's tool, an app action) and a crew from a
 * declaration: kubecrew runs them (docs/flows.md), and CrewAI's FlowDefinition accepts them as written (its runtime
 * resolves a tool ref only when it runs one).
 */
export const toolCases: { name: string; definition: Record<string, unknown> }[] = [
  {
    name: "tool methods and a crew from a declaration",
    definition: flow("ToolFlow", {
      fetch: {
        start: true,
        do: { call: "tool", ref: "http_request", with: { method: "GET", url: "${'https://a.test/' + state.item}" } },
      },
      lookup: { listen: "fetch", do: { call: "tool", ref: "https://mcp.test/mcp#lookup", with: { key: "k" } } },
      mail: {
        listen: "lookup",
        do: { call: "tool", ref: "gmail/send_email", with: { to: "a@b.test", body: "${outputs.fetch}" } },
      },
      notes: {
        listen: "mail",
        do: { call: "crew", from_declaration: "crews/note_crew", inputs: { topic: "${outputs.lookup}" } },
      },
    }),
  },
];
