import { API_VERSION } from "../core/api-group.ts";
import { EXECUTION_STOPPED_ERROR, isFinished } from "../core/execution.ts";
import {
  decideFlow,
  initialFlowState,
  type FlowActivation,
  type FlowDecision,
  type FlowEvent,
  type FlowRunState,
} from "../core/flow/decide-flow.ts";
import { flowDefinition, isRouter, type FlowDefinition } from "../core/flow/definition.ts";
import { isFlowRunOver, type FlowExecutionStatus } from "../core/flow/flow-resources.ts";
import { annotatedLlm, judgeFlowResource } from "../core/flow/flow-verdict.ts";
import { mockFeedback, mockFeedbackDueInMs } from "../core/flow/mock-feedback.ts";
import { feedbackOutcome, outputText, routerOutcome } from "../core/flow/outcomes.ts";
import { setCondition } from "../core/conditions.ts";
import type { Json } from "../core/json.ts";
import type { Logger } from "../core/logger.ts";
import { applyStatus, createIfAbsent } from "../kube/apply.ts";
import { methodLabel, methodResultName } from "../kube/flow-names.ts";
import {
  CREW_EXECUTIONS,
  CREW_TASK_RESULTS,
  FLOW_EXECUTIONS,
  LABEL_EXECUTION,
  LABEL_FLOW_EXECUTION,
  LABEL_MANAGED_BY,
  LABEL_TASK,
  MANAGED_BY,
  resourcePath,
} from "../kube/resources.ts";
import type { KubeApi, KubeObject } from "../kube/runtime/client.ts";
import { cacheKey, splitKey, type Informer } from "../kube/runtime/informer.ts";
import { isUndecodable, type Undecodable } from "../kube/runtime/undecodable.ts";
import type { ReconcileResult } from "../kube/runtime/worker.ts";
import type { CachedTaskResult } from "../kube/typed-objects.ts";
import type { CachedFlow, CachedFlowExecution } from "./flow-caches.ts";
import { advanceMethod, runOwner, type MethodWorld, type RunRef } from "./flow-method.ts";
import {
  applyDecision,
  definitionOf,
  finished,
  methodEnded,
  outcomeOf,
  outputsOf,
  WAITING_CONDITION,
  withProgress,
} from "./flow-run-status.ts";
import { executionLogger } from "./execution-trace.ts";
import { flowRunSpanTraceparent, recordFlowRunSpan } from "./flow-run-trace.ts";
import { traceparentField } from "../platform/telemetry/trace-context.ts";

export interface FlowRunReconcilerOptions extends Omit<MethodWorld, "client"> {
  client: Pick<KubeApi, "create" | "mergePatch">;
  flows: Informer<CachedFlow | Undecodable>;
  runs: Informer<CachedFlowExecution | Undecodable>;
  now: () => Date;
  log: Logger;
  /** The run's webhooks (controller/flow-webhooks.ts): handed each run as it is looked at. */
  webhooks?: { enqueueDue(run: CachedFlowExecution): void };
  /**
   * On the mock provider a human_feedback nobody answers within this many milliseconds takes its first outcome
   * (core/flow/mock-feedback.ts); 0 or absent: it waits for POST /resume however long.
   */
  mockFeedbackAfterMs?: number;
}

/** How often a run under way is looked at when nothing about it changed. */
const RESYNC_MS = 60_000;

/** Looks at one run at most this many times per reconcile (each look writes one thing). */
const MAX_LOOKS = 200;

/**
 * One reconcile of one FlowExecution: the flow's graph (decideFlow, core/flow/decide-flow.ts) kept in its status, each
 * method run's output kept in a CrewTaskResult of its own (labels kubecrew.io/execution = the run, kubecrew.io/task =
 * the method), and children named after what they are. A method run that has its result is never carried out again:
 * a controller killed at any point finds, on its return, the results and child executions it made and goes on from
 * them. Each look writes what one step of the run needs — the status (guarded by its resourceVersion), a result, the
 * children of the methods started (each created when absent) — and looks again, until nothing is left to do.
 */
export class FlowRunReconciler {
  private readonly o: FlowRunReconcilerOptions;

  constructor(options: FlowRunReconcilerOptions) {
    this.o = options;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    for (let look = 0; look < MAX_LOOKS; look++) {
      const run = this.o.runs.get(namespace, name);
      if (!run || run.metadata.deletionTimestamp || isUndecodable(run)) return {};
      this.o.webhooks?.enqueueDue(run);
      if (isFlowRunOver(run.status?.phase)) return {};
      // A run under way is looked at again now and then even if nothing is heard of it: a shard taken over from a
      // replica that died is not announced to the flows' queue. A wait the mock answers is looked at when it is due.
      if (!(await this.look(run))) {
        return { requeueAfterMs: Math.min(RESYNC_MS, this.mockDueInMs(run) ?? RESYNC_MS) };
      }
    }
    return { requeueAfterMs: 0 };
  }

  /** Does the next thing the run needs; false when there is nothing to do until something changes. */
  private async look(run: CachedFlowExecution): Promise<boolean> {
    const status = run.status ?? {};
    if (!status.definition) return this.kickoff(run);
    if (run.spec.stop) return this.stop(run);
    const definition = definitionOf(status);
    const graph = status.graph as unknown as FlowRunState;
    const results = this.resultsOf(run);
    // First what has ended: a result recorded is the method run's end, told to the graph once.
    for (const activation of graph.running) {
      const result = results.get(methodResultName(run.metadata.name, activation.id));
      if (!result) continue;
      const end = result.spec.error ? { error: result.spec.error } : outcomeOf(result);
      return this.ended(run, definition, results, activation, end, "recorded");
    }
    // Then each method still running: its action carried on, its result recorded once it has one.
    const ref = this.refOf(run);
    const context = { state: run.spec.inputs, outputs: outputsOf(graph, results, run.metadata.name) };
    for (const activation of graph.running) {
      const method = definition.methods[activation.method]!;
      if (status.waiting?.activation === activation.id) {
        const given = run.spec.feedback?.find((f) => f.activation === activation.id);
        const answer = given
          ? { feedback: given.feedback, outcome: feedbackOutcome(method, given.feedback) }
          : this.mockDueInMs(run) === 0
            ? mockFeedback(method)
            : undefined;
        if (!answer) continue;
        if (!given)
          this.logFor(run).info({ flowExecution: run.metadata.name, activation: activation.id }, "Mock feedback");
        const outcome = answer.outcome;
        const output = {
          output: status.waiting.output ?? null,
          feedback: answer.feedback,
          outcome: outcome ?? null,
          method_name: activation.method,
        };
        // A person's answer (or the mock's, due by the clock) is not a run's to repeat: recorded before anything else.
        return this.ended(run, definition, results, activation, { output, ...(outcome ? { outcome } : {}) }, "first");
      }
      const progress = await advanceMethod(this.o, ref, definition, activation.id, activation.method, context);
      if (progress.state === "pending") continue;
      // The next methods may start beside the result's write only while this is the one method running: a restart
      // then finds this same end again (its children ended, CEL over the same results), so the same methods next.
      const order = graph.running.length === 1 ? "beside" : "first";
      if (progress.state === "failed") {
        return this.ended(run, definition, results, activation, { error: progress.error }, order);
      }
      if (method.human_feedback) {
        if (status.waiting) continue; // one person's answer at a time: the next waits for this one
        return this.waitFor(run, activation, progress.output);
      }
      const outcome = isRouter(method) ? routerOutcome(method, progress.output, progress.onMock) : undefined;
      const end = { output: progress.output, agent: progress.agent, ...(outcome ? { outcome } : {}) };
      return this.ended(run, definition, results, activation, end, order);
    }
    return false;
  }

  /**
   * A method run's end: its result recorded (unless found), the graph told, the methods it starts begun, the status
   * written last (a graph past a method with no result would lose its output). The next methods' children may be made
   * before the status is: their names come from the graph's answer, the same on any later look — the cached graph is
   * the last one written, and an end is told before another result is recorded. So a hand-over waits for one write,
   * not three: `beside` makes the result and the next children at once (a restart finds this same end again), `first`
   * makes the result before them, `recorded` found it made.
   */
  private async ended(
    run: CachedFlowExecution,
    definition: FlowDefinition,
    results: Map<string, CachedTaskResult>,
    activation: FlowActivation,
    end: MethodEnd,
    order: "beside" | "first" | "recorded",
  ): Promise<boolean> {
    const event: FlowEvent =
      end.error !== undefined
        ? { type: "failed", activation: activation.id, error: end.error }
        : {
            type: "completed",
            activation: activation.id,
            ...(end.outcome !== undefined ? { outcome: end.outcome } : {}),
          };
    const decision = decideFlow(definition, run.status!.graph as unknown as FlowRunState, event);
    const status = this.endedStatus(run, definition, event, decision);
    const outputs = outputsOf(decision.state, results, run.metadata.name);
    if (order !== "recorded" && end.error === undefined) outputs[activation.method] = end.output ?? null;
    const next = () => this.begin(run, definition, decision.end ? [] : decision.start, outputs);
    if (order === "beside") await Promise.all([this.record(run, activation, end), next()]);
    else if (order === "first") await this.record(run, activation, end);
    const [written] = await Promise.all([this.write(run, status), order === "beside" ? undefined : next()]);
    return written;
  }

  /** The methods a decision starts, begun: the children of their actions created (their look comes next). */
  private async begin(
    run: CachedFlowExecution,
    definition: FlowDefinition,
    started: FlowActivation[],
    outputs: Record<string, Json>,
    ref = this.refOf(run),
  ): Promise<void> {
    const context = { state: run.spec.inputs, outputs };
    await Promise.all(started.map((a) => advanceMethod(this.o, ref, definition, a.id, a.method, context)));
  }

  private async kickoff(run: CachedFlowExecution): Promise<boolean> {
    const { namespace = "", name } = run.metadata;
    const now = this.o.now().toISOString();
    const flow = this.o.flows.get(namespace, run.spec.flowRef.name);
    const verdict =
      flow && !isUndecodable(flow)
        ? judgeFlowResource(flow.metadata.name, flow.spec, flow.metadata.annotations)
        : { ok: false as const, problems: [`Flow "${run.spec.flowRef.name}" not found`] };
    if (!verdict.ok) {
      return this.write(run, finished({ startTime: now }, "Failed", verdict.problems.join("; "), now, now));
    }
    this.logFor(run).info({ flowExecution: name, flow: run.spec.flowRef.name }, "Flow run started");
    const decision = decideFlow(verdict.definition, initialFlowState(), { type: "kickoff" });
    const status: FlowExecutionStatus = {
      phase: "Running",
      startTime: now,
      definition: verdict.definition as unknown as Json,
      methods: [],
    };
    // The start methods' children are made beside the status, as a hand-over's are: a controller killed before the
    // status is written kicks off again, and the same graph starts the same activations, whose children it finds. CEL's
    // now() in their mappings is this kickoff's time, the startTime written beside them.
    const started = decision.end || run.spec.stop ? [] : decision.start;
    const [written] = await Promise.all([
      this.write(run, applyDecision(status, verdict.definition, decision, now)),
      this.begin(run, verdict.definition, started, {}, { ...this.refOf(run), startTime: new Date(now) }),
    ]);
    return written;
  }

  /** The status once the graph is told of a method run's end. */
  private endedStatus(
    run: CachedFlowExecution,
    definition: FlowDefinition,
    event: Exclude<FlowEvent, { type: "kickoff" }>,
    decision: FlowDecision,
  ): FlowExecutionStatus {
    const now = this.o.now().toISOString();
    const activation = event.activation;
    const status = methodEnded(run.status!, event, now);
    this.logFor(run).info(
      { flowExecution: run.metadata.name, activation, failed: event.type === "failed" },
      "Flow method ended",
    );
    return applyDecision(status, definition, decision, now);
  }

  private async waitFor(run: CachedFlowExecution, activation: FlowActivation, output: Json): Promise<boolean> {
    const status = structuredClone(run.status!);
    const definition = definitionOf(status);
    const feedback = definition.methods[activation.method]!.human_feedback!;
    status.phase = "WaitingForInput";
    status.conditions = setCondition(
      status.conditions,
      {
        type: WAITING_CONDITION,
        status: "True",
        reason: "HumanFeedback",
        message: `methods.${activation.method} waits for POST /resume`,
      },
      this.o.now().toISOString(),
    );
    status.waiting = {
      activation: activation.id,
      method: activation.method,
      message: feedback.message,
      emit: feedback.emit ?? [],
      output,
    };
    status.methods = (status.methods ?? []).map((m) =>
      m.id === activation.id ? { ...m, phase: "WaitingForInput" as const } : m,
    );
    return this.write(run, withProgress(status, definition));
  }

  private async stop(run: CachedFlowExecution): Promise<boolean> {
    const { namespace = "", name } = run.metadata;
    for (const child of this.o.executions.list(namespace)) {
      if (isUndecodable(child) || child.metadata.labels?.[LABEL_FLOW_EXECUTION] !== name) continue;
      if (isFinished(child.status?.phase) || child.spec.stop) continue;
      const path = resourcePath(CREW_EXECUTIONS, namespace, child.metadata.name);
      this.o.executions.upsert(await this.o.client.mergePatch<KubeObject>(path, { spec: { stop: true } }));
    }
    const now = this.o.now().toISOString();
    return this.write(run, finished(structuredClone(run.status!), "Stopped", EXECUTION_STOPPED_ERROR, now));
  }

  /** A method run's end, as its CrewTaskResult (created when absent: a second telling finds the first). */
  private async record(run: CachedFlowExecution, activation: FlowActivation, end: MethodEnd): Promise<void> {
    const { namespace = "", name } = run.metadata;
    const started = run.status?.methods?.find((m) => m.id === activation.id)?.startTime;
    const seconds = started ? Math.max(0, (this.o.now().getTime() - Date.parse(started)) / 1000) : 0;
    const created = await createIfAbsent(this.o.client, resourcePath(CREW_TASK_RESULTS, namespace), {
      apiVersion: API_VERSION,
      kind: "CrewTaskResult",
      metadata: {
        name: methodResultName(name, activation.id),
        namespace,
        labels: {
          [LABEL_EXECUTION]: name,
          [LABEL_TASK]: methodLabel(activation.method),
          [LABEL_MANAGED_BY]: MANAGED_BY,
        },
        ownerReferences: [runOwner(this.refOf(run))],
      },
      spec: {
        executionRef: { name },
        taskName: activation.method,
        taskIndex: Number(activation.id.split("#")[1] ?? 0),
        agent: end.agent ?? "",
        ...(end.error !== undefined
          ? { error: end.error }
          : {
              output: outputText(end.output),
              jsonDict: { output: end.output ?? null, ...(end.outcome !== undefined ? { outcome: end.outcome } : {}) },
            }),
        attempt: 1,
        executionTime: seconds,
      },
    });
    if (created) this.o.results.upsert(created);
  }

  private async write(run: CachedFlowExecution, status: FlowExecutionStatus): Promise<boolean> {
    const written = await applyStatus(this.o.client, this.o.runs, FLOW_EXECUTIONS, run, status);
    if (written && isFlowRunOver(status.phase)) {
      const line = { flowExecution: run.metadata.name, phase: status.phase, error: status.error };
      this.logFor(run).info(line, "Flow run ended");
      // Once: the write that ends the run (a later write to an ended run is not its end).
      if (!isFlowRunOver(run.status?.phase)) recordFlowRunSpan(run, run.spec.flowRef.name, status);
    }
    return written !== undefined && !isFlowRunOver(status.phase);
  }

  /** Milliseconds until the mock answers the run's wait for feedback; undefined when it never does. */
  private mockDueInMs(run: CachedFlowExecution): number | undefined {
    const waiting = run.status?.waiting;
    if (!waiting) return undefined;
    const definition = flowDefinition.safeParse(run.status?.definition);
    const method = definition.success ? definition.data.methods[waiting.method] : undefined;
    if (!method) return undefined;
    const flow = this.o.flows.get(run.metadata.namespace ?? "", run.spec.flowRef.name);
    const llm = flow && !isUndecodable(flow) ? annotatedLlm(flow.metadata.annotations) : undefined;
    const flowOnMock = llm?.ok === true && llm.value?.provider === "mock";
    const since = run.status?.conditions?.find((c) => c.type === WAITING_CONDITION && c.status === "True");
    const afterMs = this.o.mockFeedbackAfterMs ?? 0;
    return mockFeedbackDueInMs(method, flowOnMock, since?.lastTransitionTime, afterMs, this.o.now());
  }

  private resultsOf(run: CachedFlowExecution): Map<string, CachedTaskResult> {
    const key = cacheKey(run.metadata.namespace ?? "", run.metadata.name);
    const byName = new Map<string, CachedTaskResult>();
    for (const r of this.o.results.byIndex(key)) if (!isUndecodable(r)) byName.set(r.metadata.name, r);
    return byName;
  }

  /** The run's lines name its trace (`trace_id`) when its kickoff was traced, as an execution's do. */
  private logFor(run: CachedFlowExecution): Logger {
    return executionLogger(this.o.log, run);
  }

  private refOf(run: CachedFlowExecution): RunRef {
    return {
      namespace: run.metadata.namespace ?? "",
      name: run.metadata.name,
      uid: run.metadata.uid ?? "",
      flow: run.spec.flowRef.name,
      ...(run.spec.requestedBy ? { requestedBy: run.spec.requestedBy } : {}),
      startTime: new Date(run.status?.startTime ?? run.metadata.creationTimestamp ?? 0),
      ...traceparentField(flowRunSpanTraceparent(run)),
    };
  }
}

/** How a method run ended: its output (a router's or feedback's outcome), or its error. */
interface MethodEnd {
  output?: Json;
  outcome?: string;
  agent?: string;
  error?: string;
}
