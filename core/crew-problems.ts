import { asyncTaskProblems } from "./async-tasks.ts";
import type { CrewSpec, LlmConfig } from "./crew.ts";
import { processProblems } from "./crew-process.ts";
import { taskPythonProblems } from "./python-references.ts";
import { taskGuardrailProblems } from "./task-guardrails.ts";
import { taskToolCallProblems } from "./task-tool-call.ts";
import { agentToolProblems, mcpServerProblems } from "./tools.ts";
import { declaredWholeProblems, wholeProjectProblems } from "./whole-project.ts";

/**
 * The rules between a Crew's fields, one line per problem: those CEL enforces in the CRD, checked here for the embedded
 * mode and the API: `crewSpec` (core/crew-resource.ts) adds them to its parse.
 */
export function crewSpecProblems(spec: CrewSpec): string[] {
  const problems: string[] = [];
  const agents = new Set(spec.agents.map((a) => a.name));
  const allTasks = new Set(spec.tasks.map((t) => t.name));
  const seenTasks = new Set<string>();
  const duplicateOf = (names: string[]) => names.filter((n, i) => names.indexOf(n) !== i);
  const duplicates = (kind: string, items: { name: string }[]) => {
    const names = items.map((i) => i.name);
    for (const name of new Set(duplicateOf(names))) problems.push(`duplicate ${kind} name "${name}"`);
  };
  duplicates("agent", spec.agents);
  duplicates("task", spec.tasks);
  duplicates("input", spec.inputs);
  for (const t of spec.tasks) {
    if (t.agent !== undefined && !agents.has(t.agent)) {
      problems.push(`task "${t.name}" names agent "${t.agent}", which is not defined`);
    }
    for (const c of t.context ?? []) {
      const where = `task "${t.name}" takes context from "${c}"`;
      if (!allTasks.has(c)) problems.push(`${where}, which is not a task of this crew`);
      else if (c === t.name) problems.push(`task "${t.name}" takes context from itself`);
      else if (!seenTasks.has(c)) problems.push(`${where}, which does not run before it`);
    }
    seenTasks.add(t.name);
    problems.push(...taskGuardrailProblems(t.name, t));
    problems.push(...taskPythonProblems(spec.runtime, t.name, t));
    problems.push(...taskToolCallProblems(spec.runtime, t.name, t));
  }
  problems.push(...asyncTaskProblems(spec.tasks));
  problems.push(...processProblems(spec));
  problems.push(...wholeProjectProblems(spec));
  problems.push(...declaredWholeProblems(spec));
  problems.push(...mcpServerProblems(spec.mcpServers));
  if (spec.runtime === "crewai" && spec.toolPolicy.requireApproval.length > 0) {
    // CrewAI's own loop makes the calls there: a rule it cannot hold must not look as if it held.
    problems.push("toolPolicy.requireApproval is not supported on the crewai runtime yet: use runtime kubecrew");
  }
  for (const a of spec.agents) problems.push(...agentToolProblems(a, spec.mcpServers));
  const models: [string, LlmConfig | undefined][] = spec.agents.map((a) => [`agent "${a.name}"`, a.llm ?? spec.llm]);
  if (spec.managerLlm) models.push(["managerLlm", spec.managerLlm]);
  if (spec.managerAgent) models.push(["managerAgent", spec.managerAgent.llm ?? spec.managerLlm ?? spec.llm]);
  for (const [who, llm] of models) {
    if (llm?.provider === "openai-compatible" && !llm.baseURL) {
      problems.push(`${who}: provider openai-compatible needs a baseURL`);
    }
  }
  return problems;
}
