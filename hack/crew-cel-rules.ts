/** The CEL rules the Crew CRD carries (hack/generate-crds.ts puts them in place). */

interface CelRule {
  rule: string;
  message: string;
  fieldPath: string;
  /** FieldValueInvalid, also for duplicates: the apiserver prints a FieldValueDuplicate without its message. */
  reason: "FieldValueInvalid";
}

/**
 * The consistency rules of a crew (crewSpecProblems in core/crew.ts), enforced by the apiserver.
 *
 * Uniqueness is a CEL rule rather than `x-kubernetes-list-type: map`: a map list would also reject duplicates, but
 * with a bare "Duplicate value: map[string]interface {}{...}", and would let server-side apply merge (and reorder)
 * the task list item by item, where a crew's task order is its meaning.
 *
 * The messages are fixed: a messageExpression naming the offending task (filter()[0].name) is estimated at more than
 * 100 times the apiserver's cost budget, because the estimate loses the name's maxLength. The list and name limits
 * of core/crew.ts keep these rules within the budget, estimated and actual: the largest crew allowed (100 tasks, 50
 * agents, 100 inputs, contexts of 20) passes them. The context rule uses sets.contains (Kubernetes 1.30+) because the
 * same check as a nested comprehension runs out of the per-call cost limit on such a crew.
 * "Context names an earlier task" needs positions, too costly here; it is left to crewSpecProblems, and so is CrewAI's
 * rule on an asynchronous task taking context from one that starts with it. The last two tasks are cheap to look at:
 * a crew ends with at most one asynchronous task when they are not both asynchronous.
 */
export const crewRules: CelRule[] = [
  {
    rule: "self.tasks.all(t, has(t.agent) ? self.agents.exists(a, a.name == t.agent) : has(self.process) && self.process == 'hierarchical')",
    message:
      "every task's agent must be the name of an agent in spec.agents; only a hierarchical crew's task may leave it out",
    fieldPath: ".tasks",
    reason: "FieldValueInvalid",
  },
  {
    rule: "!has(self.process) || self.process != 'hierarchical' || has(self.managerLlm) || has(self.managerAgent)",
    message: "process hierarchical needs a manager: set managerLlm or managerAgent",
    fieldPath: ".process",
    reason: "FieldValueInvalid",
  },
  {
    rule: "self.tasks.all(t, self.tasks.exists_one(u, u.name == t.name))",
    message: "task names must be unique",
    fieldPath: ".tasks",
    reason: "FieldValueInvalid",
  },
  {
    rule: "self.agents.all(a, self.agents.exists_one(b, b.name == a.name))",
    message: "agent names must be unique",
    fieldPath: ".agents",
    reason: "FieldValueInvalid",
  },
  {
    rule: "!has(self.inputs) || self.inputs.all(i, self.inputs.exists_one(j, j.name == i.name))",
    message: "input names must be unique",
    fieldPath: ".inputs",
    reason: "FieldValueInvalid",
  },
  {
    rule: "self.tasks.all(t, !has(t.context) || sets.contains(self.tasks.map(u, u.name), t.context))",
    message: "a task's context must name tasks of this crew",
    fieldPath: ".tasks",
    reason: "FieldValueInvalid",
  },
  {
    rule: "self.tasks.all(t, !has(t.context) || !(t.name in t.context))",
    message: "a task cannot take context from itself",
    fieldPath: ".tasks",
    reason: "FieldValueInvalid",
  },
  {
    rule:
      "size(self.tasks) < 2 || !(has(self.tasks[size(self.tasks) - 1].asyncExecution) && self.tasks[size(self.tasks) - 1].asyncExecution" +
      " && has(self.tasks[size(self.tasks) - 2].asyncExecution) && self.tasks[size(self.tasks) - 2].asyncExecution)",
    message: "a crew may end with at most one asynchronous task (asyncExecution)",
    fieldPath: ".tasks",
    reason: "FieldValueInvalid",
  },
  {
    rule: "!has(self.mcpServers) || self.mcpServers.all(s, self.mcpServers.exists_one(t, t.name == s.name))",
    message: "MCP server names must be unique",
    fieldPath: ".mcpServers",
    reason: "FieldValueInvalid",
  },
  {
    rule: "!has(self.runner) || !has(self.runner.crew) || (has(self.runtime) && self.runtime == 'crewai')",
    message: "runner.crew names a CrewAI project, which only the crewai runtime runs: set spec.runtime to crewai",
    fieldPath: ".runner.crew",
    reason: "FieldValueInvalid",
  },
];

export const headerRule = {
  rule: "has(self.value) != has(self.valueFrom)",
  message: "a header needs exactly one of value and valueFrom",
  fieldPath: ".value",
  reason: "FieldValueInvalid",
};

export const llmRule = {
  rule: "self.provider != 'openai-compatible' || has(self.baseURL)",
  message: "provider openai-compatible needs a baseURL",
  fieldPath: ".baseURL",
  reason: "FieldValueRequired",
};

/**
 * A guardrail is one check. CEL cannot see `jsonSchema` (free-form JSON has no CEL type, so naming it fails the CRD),
 * so the apiserver refuses two of the other kinds together; none, or jsonSchema with another, is left to
 * crewSpecProblems (the Crew's Ready condition).
 */
export const guardrailRule = {
  rule: "(has(self.llm) ? 1 : 0) + (has(self.maxLength) ? 1 : 0) + (has(self.regex) ? 1 : 0) <= 1",
  message: "a guardrail needs exactly one of llm, jsonSchema, maxLength, regex",
  reason: "FieldValueInvalid",
};
