import { conditionEvents } from "./problems.ts";
import { isRouter, isStart, outcomesOf, type FlowDefinition } from "./definition.ts";

/** A method as a node of the flow's graph. */
export interface FlowGraphNode {
  name: string;
  start: boolean;
  /** What it runs: agent, crew, expression, each, … */
  call: string;
  router: boolean;
  humanFeedback: boolean;
}

/**
 * An edge: `to` listens to `from` — to its completion, or (with `outcome`) to that outcome of a router or a
 * human_feedback. `join` says how `to` combines its events: `and` waits for all, `or` for the first.
 */
export interface FlowGraphEdge {
  from: string;
  to: string;
  outcome?: string;
  join?: "and" | "or";
}

export interface FlowGraph {
  nodes: FlowGraphNode[];
  edges: FlowGraphEdge[];
}

/** The method graph a person reads: methods, and who listens to whom (the console draws it). */
export function flowGraph(definition: FlowDefinition): FlowGraph {
  const methods = Object.entries(definition.methods);
  const nodes = methods.map(([name, m]) => ({
    name,
    start: isStart(m),
    call: m.do.call,
    router: Boolean(m.router),
    humanFeedback: Boolean(m.human_feedback),
  }));
  const edges: FlowGraphEdge[] = [];
  for (const [to, m] of methods) {
    if (!m.listen) continue;
    const join = typeof m.listen === "string" ? undefined : "and" in m.listen ? "and" : "or";
    for (const event of conditionEvents(m.listen)) {
      const emitters = methods.filter(([, r]) => isRouter(r) && outcomesOf(r).includes(event));
      for (const [from] of emitters) edges.push({ from, to, outcome: event, ...(join ? { join } : {}) });
      if (definition.methods[event]) edges.push({ from: event, to, ...(join ? { join } : {}) });
    }
  }
  return { nodes, edges };
}
