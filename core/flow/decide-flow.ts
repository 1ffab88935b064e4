import { conditionEvents } from "./problems.ts";
import { isRouter, isStart, maxMethodCalls, type FlowCondition, type FlowDefinition } from "./definition.ts";

/**
 * The graph of a declarative flow as one pure reducer, the flow's counterpart of decide(): given the definition, the
 * run's state so far and what just happened (the kickoff, a method's end), it answers the new state and the methods
 * to start. Nothing here runs a method, reads a clock or does I/O; the state is plain JSON, kept with the run so a
 * restart goes on from it.
 *
 * The semantics are CrewAI's: start methods run at kickoff; a method's end is an event named after it; the routers
 * listening to an event run first, one chain of outcomes after another, and only then the other listeners of the
 * event and of every outcome of the chain run, side by side; an `and` listener waits until it has seen every event
 * it names (then forgets them), an `or` of several events runs once until the flow loops (a method running again
 * re-arms them, as does a router outcome naming them); a conditional start runs when a router emits what it waits
 * for. Loops are allowed: `config.max_method_calls` bounds the runs of each method, and going past it fails the run.
 */

export interface FlowActivation {
  /** `<method>#<n>`: the method's nth run in this kickoff. */
  id: string;
  method: string;
  /** The router chain it belongs to, for a router started by another event. */
  chain?: number;
}

interface RouterChain {
  id: number;
  /** The event that started the chain, then each outcome its routers gave. */
  triggers: string[];
  /** Activation ids of its routers still running. */
  running: string[];
}

export interface FlowRunState {
  calls: Record<string, number>;
  /** Events each listener has seen since it last ran (what an `and` waits on). */
  seen: Record<string, string[]>;
  /** Multi-event `or` listeners that have run and wait to be re-armed. */
  firedOr: string[];
  chains: RouterChain[];
  nextChain: number;
  running: FlowActivation[];
  /** Methods that have ended, in the order they ended (a loop lists one several times). */
  completed: string[];
  /** Each routing method's outcomes, in order. */
  outcomes: { method: string; outcome: string }[];
}

export type FlowEvent =
  | { type: "kickoff" }
  | { type: "completed"; activation: string; outcome?: string }
  | { type: "failed"; activation: string; error: string };

export interface FlowDecision {
  state: FlowRunState;
  start: FlowActivation[];
  /** Set when the run is over: nothing runs and nothing waits. */
  end?: { phase: "Succeeded" } | { phase: "Failed"; error: string };
}

export function initialFlowState(): FlowRunState {
  return { calls: {}, seen: {}, firedOr: [], chains: [], nextChain: 1, running: [], completed: [], outcomes: [] };
}

export function decideFlow(definition: FlowDefinition, previous: FlowRunState, event: FlowEvent): FlowDecision {
  const run = new FlowRun(definition, structuredClone(previous));
  try {
    if (event.type === "kickoff") {
      for (const [name, method] of Object.entries(definition.methods)) {
        if (method.start === true) run.start(name);
      }
    } else if (event.type === "failed") {
      run.remove(event.activation);
      return { state: run.state, start: [], end: { phase: "Failed", error: event.error } };
    } else {
      run.complete(event.activation, event.outcome);
    }
  } catch (error) {
    if (!(error instanceof TooManyCalls)) throw error;
    return { state: run.state, start: run.started, end: { phase: "Failed", error: error.message } };
  }
  const idle = !run.state.running.length && !run.state.chains.length;
  return { state: run.state, start: run.started, ...(idle ? { end: { phase: "Succeeded" as const } } : {}) };
}

class TooManyCalls extends Error {}

function satisfied(condition: FlowCondition, events: Set<string>): boolean {
  if (typeof condition === "string") return events.has(condition);
  return "and" in condition
    ? condition.and.every((c) => satisfied(c, events))
    : condition.or.some((c) => satisfied(c, events));
}

function multiEventOr(condition: FlowCondition): boolean {
  return typeof condition !== "string" && "or" in condition && condition.or.length > 1;
}

class FlowRun {
  readonly started: FlowActivation[] = [];
  private readonly definition: FlowDefinition;
  readonly state: FlowRunState;

  constructor(definition: FlowDefinition, state: FlowRunState) {
    this.definition = definition;
    this.state = state;
  }

  start(method: string, chain?: number): void {
    const calls = (this.state.calls[method] ?? 0) + 1;
    if (calls > maxMethodCalls(this.definition)) {
      throw new TooManyCalls(
        `method "${method}" would run ${calls} times, more than config.max_method_calls (${maxMethodCalls(this.definition)}): the flow loops without end`,
      );
    }
    // A method running again starts a new round of the loop: every `or` may fire once more.
    if (this.state.completed.includes(method)) this.state.firedOr = [];
    this.state.calls[method] = calls;
    const activation = { id: `${method}#${calls}`, method, ...(chain !== undefined ? { chain } : {}) };
    this.state.running.push(activation);
    this.started.push(activation);
  }

  remove(id: string): FlowActivation | undefined {
    const index = this.state.running.findIndex((a) => a.id === id);
    return index === -1 ? undefined : this.state.running.splice(index, 1)[0];
  }

  complete(id: string, outcome: string | undefined): void {
    const activation = this.remove(id);
    if (!activation) return; // told twice: the first telling counted
    const { method } = activation;
    this.state.completed.push(method);
    const routing = isRouter(this.definition.methods[method]!);
    if (routing && outcome !== undefined) this.state.outcomes.push({ method, outcome });
    const chain = this.state.chains.find((c) => c.id === activation.chain);
    if (chain) {
      chain.running = chain.running.filter((r) => r !== id);
      if (outcome !== undefined) {
        chain.triggers.push(outcome);
        for (const router of this.triggered(outcome, true)) {
          this.start(router, chain.id);
          chain.running.push(this.started.at(-1)!.id);
        }
      }
      if (!chain.running.length) {
        this.state.chains = this.state.chains.filter((c) => c !== chain);
        this.release(chain.triggers);
      }
      return;
    }
    this.fire(method);
    if (routing && outcome !== undefined) this.fire(outcome, true);
  }

  /** An event: the routers listening to it first (a chain), else its listeners at once. */
  private fire(event: string, isOutcome = false): void {
    const routers = this.triggered(event, true);
    if (!routers.length) {
      this.release(isOutcome ? ["", event] : [event]);
      return;
    }
    const chain: RouterChain = { id: this.state.nextChain++, triggers: [event], running: [] };
    this.state.chains.push(chain);
    for (const router of routers) {
      this.start(router, chain.id);
      chain.running.push(this.started.at(-1)!.id);
    }
  }

  /** The listeners (not routers) of each event; after the first, the events are outcomes. */
  private release(triggers: string[]): void {
    const rearmable = new Set(this.state.firedOr);
    for (const [index, event] of triggers.entries()) {
      if (!event) continue;
      if (index > 0) this.rearm(event, rearmable);
      for (const listener of this.triggered(event, false)) this.start(listener);
      if (index > 0) {
        for (const [name, method] of Object.entries(this.definition.methods)) {
          const condition = typeof method.start === "boolean" ? undefined : method.start;
          if (condition && isStart(method) && satisfied(condition, new Set([event]))) this.start(name);
        }
      }
    }
  }

  private rearm(event: string, rearmable: Set<string>): void {
    this.state.firedOr = this.state.firedOr.filter((name) => {
      const listen = this.definition.methods[name]?.listen;
      return !(rearmable.has(name) && listen && conditionEvents(listen).includes(event));
    });
  }

  /** The methods an event sets off, routers or not, in the order the definition lists them. */
  private triggered(event: string, routers: boolean): string[] {
    const found: string[] = [];
    for (const [name, method] of Object.entries(this.definition.methods)) {
      const condition = method.listen;
      if (!condition || isRouter(method) !== routers) continue;
      const once = multiEventOr(condition) && !routers;
      if (once && this.state.firedOr.includes(name)) continue;
      const seen = new Set([...(this.state.seen[name] ?? []), event]);
      if (!satisfied(condition, seen)) {
        this.state.seen[name] = [...seen];
        continue;
      }
      delete this.state.seen[name];
      found.push(name);
      if (once) this.state.firedOr.push(name);
    }
    return found;
  }
}
