import { randomUUID } from "node:crypto";
import type { Crew } from "../core/crew.ts";
import type { Requester } from "../core/execution.ts";
import {
  decideFlow,
  initialFlowState,
  type FlowActivation,
  type FlowDecision,
  type FlowRunState,
} from "../core/flow/decide-flow.ts";
import { isRouter, type FlowDefinition, type FlowMethod } from "../core/flow/definition.ts";
import { feedbackOnMock, mockFeedback } from "../core/flow/mock-feedback.ts";
import { feedbackOutcome, outputText, routerOutcome } from "../core/flow/outcomes.ts";
import type { Json } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import type { Span } from "@opentelemetry/api";
import { endFlowRunSpan, startFlowRunSpan } from "../platform/telemetry/flow-run-span.ts";
import { traceIdOf, traceparentField, traceparentOf } from "../platform/telemetry/trace-context.ts";
import { runMethodAction } from "./flow-actions.ts";
import { FlowRunWebhooks, type FlowRunHooks } from "./flow-webhooks.ts";
import type { LocalExecutions } from "./local-executions.ts";
import type {
  FlowBackend,
  FlowKickoffExtras,
  FlowRunEvent,
  FlowRunView,
  LoadedFlow,
  MethodRun,
} from "../api/flow-backend.ts";

interface Run extends FlowRunView, FlowRunHooks {
  definition: FlowDefinition;
  graph: FlowRunState;
  children: Set<string>;
  abort: AbortController;
  waitingActivation?: string;
  listeners: Set<() => void>;
  stepPoll?: NodeJS.Timeout;
  /** The kickoff's requester: its child executions act with its user's connected apps. */
  requestedBy?: Requester;
  /** The run's span until it ends (a no-op span with tracing off). */
  span: Span;
}

/** How often a run with a step webhook reads its child executions' steps. */
const STEP_POLL_MS = 250;

export interface FlowRunsOptions {
  flows: LoadedFlow[];
  /** The executions that run the flows' crew and agent methods (their crews held by it). */
  executions: LocalExecutions;
  crews: Crew[];
  log: Logger;
  eachConcurrency: number;
  /**
   * On the mock provider a human_feedback that nobody answers within this many milliseconds is answered by the mock
   * with its first outcome (0: it waits for POST /resume however long), so a flow runs to its end with no model.
   */
  mockFeedbackAfterMs?: number;
  /** Whether `kubecrew dev`'s model is the mock provider (a human_feedback that names no llm uses it). */
  onMock?: boolean;
  /** The outbound client's fetch: a run's webhooks go only where the outbound URL policy allows. */
  webhookFetch?: typeof fetch;
  now?: () => Date;
}

/**
 * The embedded default's flow runs: in memory, each method's action carried out here (CEL) or as a child execution
 * (crews, agents), the graph decided by decideFlow().
 */
export class FlowRuns implements FlowBackend {
  private readonly runs = new Map<string, Run>();
  private readonly flows: Map<string, LoadedFlow>;
  private readonly crews: Map<string, Crew>;
  private readonly now: () => Date;
  private readonly webhooks: FlowRunWebhooks;

  private readonly options: FlowRunsOptions;

  constructor(options: FlowRunsOptions) {
    this.options = options;
    this.flows = new Map(options.flows.map((f) => [f.name, f]));
    this.crews = new Map(options.crews.map((c) => [c.metadata.name, c]));
    this.now = options.now ?? (() => new Date());
    this.webhooks = new FlowRunWebhooks({
      log: options.log,
      fetch: options.webhookFetch ?? fetch,
      now: this.now,
      executions: options.executions,
    });
  }

  webhookSigningSecret(flow: string): string {
    return this.webhooks.secretFor(flow);
  }

  listFlows(): LoadedFlow[] {
    return [...this.flows.values()];
  }

  getFlow(name: string): LoadedFlow | undefined {
    return this.flows.get(name);
  }

  getRun(flow: string, id: string): FlowRunView | undefined {
    const run = this.runs.get(id);
    return run && run.flow === flow ? run : undefined;
  }

  /** Calls `listener` whenever the run changes, until the answer is called. */
  onChange(id: string, listener: () => void): () => void {
    const run = this.runs.get(id);
    run?.listeners.add(listener);
    return () => run?.listeners.delete(listener);
  }

  kickoff(flow: LoadedFlow, state: Record<string, Json>, given: FlowKickoffExtras = {}): string {
    const id = randomUUID();
    const span = startFlowRunSpan({ flow: flow.name, execution: id });
    const run: Run = {
      id,
      flow: flow.name,
      phase: "Running",
      created: this.now().toISOString(),
      state,
      outputs: {},
      methods: [],
      outcomes: [],
      executionTime: 0,
      events: [],
      definition: flow.definition,
      graph: initialFlowState(),
      children: new Set(),
      abort: new AbortController(),
      startedAt: this.now().getTime(),
      listeners: new Set(),
      ...given,
      activationOutputs: new Map(),
      hooksSent: new Set(),
      childRuns: new Map(),
      stepsSending: new Set(),
      // The run's span, under the kickoff's (the active one): its webhook deliveries and child executions go under it.
      span,
      ...traceparentField(traceparentOf(span)),
    };
    this.runs.set(id, run);
    // The child executions' steps are read as they come: looked at every STEP_POLL_MS while the run goes on.
    if (run.webhooks?.step) run.stepPoll = setInterval(() => this.webhooks.deliverDue(run), STEP_POLL_MS).unref();
    logOf(run, this.options.log).info({ flow: flow.name, execution: id }, "Flow kicked off");
    this.apply(run, decideFlow(run.definition, run.graph, { type: "kickoff" }));
    return id;
  }

  /** A person's feedback on the method that waits: its outcome chosen from the feedback. */
  resume(run: FlowRunView, feedback: string): { outcome?: string } {
    const held = this.runs.get(run.id)!;
    const outcome = feedbackOutcome(held.definition.methods[held.waiting!.method]!, feedback);
    this.answer(held, feedback, outcome);
    return outcome ? { outcome } : {};
  }

  private answer(held: Run, feedback: string, outcome: string | undefined): void {
    const activation = held.waitingActivation!;
    const waiting = held.waiting!;
    delete held.waiting;
    delete held.waitingActivation;
    held.phase = "Running";
    const output = { output: waiting.output, feedback, outcome: outcome ?? null, method_name: waiting.method };
    this.complete(held, activation, output, outcome);
  }

  /** The mock's answer to a wait nobody answered in time: the first outcome, as a model asked to choose would. */
  private mockFeedbackLater(run: Run, activation: string, method: FlowMethod): void {
    const after = this.options.mockFeedbackAfterMs ?? 0;
    if (!after || !feedbackOnMock(method, this.options.onMock ?? false)) return;
    const timer = setTimeout(() => {
      if (run.waitingActivation !== activation || isOver(run)) return;
      const { feedback, outcome } = mockFeedback(method);
      logOf(run, this.options.log).info(
        { flow: run.flow, execution: run.id, method: run.waiting?.method, outcome },
        "Mock feedback",
      );
      this.answer(run, feedback, outcome);
    }, after);
    timer.unref();
  }

  async stop(run: FlowRunView): Promise<void> {
    const held = this.runs.get(run.id)!;
    this.finish(held, "Stopped", "Execution stopped");
  }

  private apply(run: Run, decision: FlowDecision): void {
    run.graph = decision.state;
    run.outcomes = decision.state.outcomes;
    if (decision.end) {
      if (decision.end.phase === "Failed") this.finish(run, "Failed", decision.end.error);
      else this.finish(run, "Succeeded");
      return;
    }
    for (const activation of decision.start) void this.runMethod(run, activation);
    this.changed(run);
  }

  private async runMethod(run: Run, activation: FlowActivation): Promise<void> {
    const record: MethodRun = {
      id: activation.id,
      method: activation.method,
      phase: "Running",
      startTime: this.now().toISOString(),
    };
    run.methods.push(record);
    this.event(run, "method_started", activation.method, { activation: activation.id });
    const method = run.definition.methods[activation.method]!;
    let result;
    try {
      result = await runMethodAction(
        {
          flow: run.flow,
          definition: run.definition,
          executions: this.options.executions,
          crews: this.crews,
          now: new Date(run.startedAt),
          onChild: (id) => {
            run.children.add(id);
            run.childRuns.set(id, activation.id);
          },
          eachConcurrency: this.options.eachConcurrency,
          signal: run.abort.signal,
          ...(run.requestedBy ? { requestedBy: run.requestedBy } : {}),
          ...traceparentField(run.traceparent),
        },
        activation.method,
        { state: run.state, outputs: run.outputs },
      );
    } catch (error) {
      if (isOver(run)) return;
      const message = error instanceof Error ? error.message : String(error);
      Object.assign(record, { phase: "Failed", error: message, completionTime: this.now().toISOString() });
      this.event(run, "method_failed", activation.method, { activation: activation.id, error: message });
      this.apply(
        run,
        decideFlow(run.definition, run.graph, { type: "failed", activation: activation.id, error: message }),
      );
      return;
    }
    if (isOver(run)) return;
    const feedback = method.human_feedback;
    if (feedback) {
      record.phase = "WaitingForInput";
      run.phase = "WaitingForInput";
      run.waitingActivation = activation.id;
      run.waiting = {
        method: activation.method,
        message: feedback.message,
        emit: feedback.emit ?? [],
        output: result.output,
      };
      this.event(run, "human_feedback_requested", activation.method, {
        message: feedback.message,
        emit: feedback.emit ?? [],
        output: outputText(result.output),
      });
      this.changed(run);
      this.mockFeedbackLater(run, activation.id, method);
      return;
    }
    const outcome = isRouter(method) ? routerOutcome(method, result.output, result.onMock) : undefined;
    this.complete(run, activation.id, result.output, outcome);
  }

  private complete(run: Run, activation: string, output: Json, outcome: string | undefined): void {
    const record = run.methods.find((m) => m.id === activation)!;
    Object.assign(record, {
      phase: "Succeeded",
      completionTime: this.now().toISOString(),
      ...(outcome ? { outcome } : {}),
    });
    run.outputs = { ...run.outputs, [record.method]: output };
    run.activationOutputs.set(activation, output);
    run.result = output;
    this.event(run, "method_completed", record.method, {
      activation,
      output,
      ...(outcome !== undefined ? { outcome } : {}),
    });
    this.apply(
      run,
      decideFlow(run.definition, run.graph, {
        type: "completed",
        activation,
        ...(outcome !== undefined ? { outcome } : {}),
      }),
    );
  }

  private finish(run: Run, phase: "Succeeded" | "Failed" | "Stopped", error?: string): void {
    if (isOver(run)) return;
    run.phase = phase;
    if (error) run.error = error;
    run.executionTime = Math.round(this.now().getTime() - run.startedAt) / 1000;
    run.abort.abort();
    clearInterval(run.stepPoll);
    for (const child of run.children) void this.stopChild(child);
    endFlowRunSpan(run.span, phase, error);
    this.event(run, "flow_finished", undefined, { phase, ...(error ? { error } : {}) });
    logOf(run, this.options.log).info({ flow: run.flow, execution: run.id, phase }, "Flow finished");
    this.changed(run);
  }

  private async stopChild(id: string): Promise<void> {
    for (const crew of this.crews.keys()) {
      const view = await this.options.executions.getExecution(crew, id);
      if (view && !view.status?.phase?.match(/Succeeded|Failed|Stopped/))
        await this.options.executions.stopExecution(crew, id);
    }
  }

  private event(run: Run, type: FlowRunEvent["type"], method: string | undefined, data: Record<string, Json>): void {
    run.events.push({ id: run.events.length + 1, type, ...(method ? { method } : {}), data });
  }

  private changed(run: Run): void {
    this.webhooks.deliverDue(run);
    for (const listener of run.listeners) listener();
  }
}

/** The run's lines name its trace (`trace_id`) when it has one, as an execution's do. */
function logOf(run: Run, log: Logger): Logger {
  const traceId = traceIdOf(run.traceparent);
  return traceId ? log.child({ trace_id: traceId }) : log;
}

function isOver(run: Run): boolean {
  return run.phase === "Succeeded" || run.phase === "Failed" || run.phase === "Stopped";
}
