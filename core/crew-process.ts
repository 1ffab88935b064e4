import type { Agent, CrewSpec, LlmConfig } from "./crew.ts";

/**
 * CrewAI's two processes on the kubecrew runtime. Sequential: each task is carried out by its agent, which may hand
 * work to the other agents when it has `allowDelegation`. Hierarchical: every task goes to a manager (the crew's
 * `managerAgent`, or one kubecrew provides around `managerLlm`) that has no tools of its own and gets the work done
 * through delegation tools over the task's agent, or over every agent when the task names none.
 */

type ProcessFields = Pick<CrewSpec, "process" | "managerLlm" | "managerAgent" | "llm" | "agents" | "tasks">;

/** The name of the manager kubecrew provides around a crew's `managerLlm`. */
export const MANAGER_NAME = "manager";

/** The manager kubecrew provides when a hierarchical crew gives only `managerLlm` (in kubecrew's own words). */
export function providedManager(llm: LlmConfig | undefined): Agent {
  return {
    name: MANAGER_NAME,
    role: "Crew Manager",
    goal: "See every task of the crew done well by giving its parts to the coworkers best suited to them and checking what they hand back",
    backstory:
      "You lead a team of specialists. You do not do the work yourself: you split it, brief the right coworker with " +
      "everything they need to know, question them when something is unclear, and put their answers together.",
    tools: [],
    mcps: [],
    apps: [],
    maxIter: 25,
    allowDelegation: true,
    ...(llm ? { llm } : {}),
  };
}

/** The manager of a hierarchical crew, with its model filled in (its own, managerLlm, then the crew's llm). */
export function managerOf(spec: ProcessFields): Agent {
  const own = spec.managerAgent;
  if (own) return { ...own, allowDelegation: true, llm: own.llm ?? spec.managerLlm ?? spec.llm };
  return providedManager(spec.managerLlm ?? spec.llm);
}

/**
 * The agents the one carrying task `index` out may delegate to, with the crew's model filled in: in a hierarchical
 * crew the task's agent, or every agent when it names none; in a sequential crew, when the task's agent has
 * `allowDelegation`, every other agent. Empty: no delegation tools.
 */
export function coworkersOf(spec: ProcessFields, index: number): Agent[] {
  const task = spec.tasks[index];
  if (!task) return [];
  const withModel = (a: Agent): Agent => ({ ...a, llm: a.llm ?? spec.llm });
  if (spec.process === "hierarchical") {
    const own = spec.agents.filter((a) => a.name === task.agent);
    return (task.agent === undefined ? spec.agents : own).map(withModel);
  }
  const agent = spec.agents.find((a) => a.name === task.agent);
  if (!agent?.allowDelegation) return [];
  return spec.agents.filter((a) => a.name !== agent.name).map(withModel);
}

/** What is wrong with a crew's process fields, one line per problem (crewSpecProblems adds them to its own). */
export function processProblems(spec: ProcessFields): string[] {
  const problems: string[] = [];
  if (spec.process === "hierarchical" && !spec.managerLlm && !spec.managerAgent) {
    problems.push(
      "process hierarchical needs a manager: set managerLlm (a model for the manager kubecrew provides) or managerAgent",
    );
  }
  const manager = spec.managerAgent;
  if (manager && (manager.tools.length > 0 || manager.mcps.length > 0 || manager.apps.length > 0)) {
    problems.push(
      `managerAgent "${manager.name}" has tools, mcps or apps: a manager has no tools of its own, it works through its coworkers (give the tools to an agent)`,
    );
  }
  if (spec.process !== "hierarchical") {
    for (const t of spec.tasks) {
      if (t.agent === undefined) {
        problems.push(
          `task "${t.name}" names no agent: in a sequential crew every task needs one (only a hierarchical crew's manager chooses)`,
        );
      }
    }
  }
  return problems;
}

/**
 * The agent a task runs with, with the crew's default model filled in: the task's agent, or in a hierarchical crew
 * the manager.
 */
export function agentFor(spec: CrewSpec, taskName: string): Agent {
  const t = spec.tasks.find((x) => x.name === taskName);
  if (t && spec.process === "hierarchical") return managerOf(spec);
  const a = t && spec.agents.find((x) => x.name === t.agent);
  if (!t || !a) throw new Error(`task "${taskName}" has no agent`);
  return { ...a, llm: a.llm ?? spec.llm };
}
