import { randomUUID } from "node:crypto";
import type { Span } from "@opentelemetry/api";
import { join } from "node:path";
import type { Crew } from "../core/crew.ts";
import { decide } from "../core/decide.ts";
import type { Action } from "../core/decision.ts";
import type { TaskResultSpec } from "../core/task-result.ts";
import { isFinished, type ExecutionSpec, type ExecutionStatus } from "../core/execution.ts";
import { judgeRecorded, type RecordedKickoff } from "../core/idempotency.ts";
import type { Logger } from "../core/logger.ts";
import type { ObservedTask } from "../core/observed-task.ts";
import type {
  DecisionChange,
  ExecutionBackend,
  ExecutionView,
  KickoffOutcome,
  NewExecution,
} from "../api/execution-backend.ts";
import type { LocalAppCredentials } from "./app-credentials.ts";
import { endExecutionSpan, startExecutionSpan, traceEnv } from "../platform/telemetry/execution-span.ts";
import { traceparentOf } from "../platform/telemetry/trace-context.ts";
import { TaskProcess } from "./task-process.ts";
import { resultsByTask } from "./project-outcomes.ts";
import { TaskSlots } from "./task-slots.ts";
import { deliverWebhook } from "./webhook.ts";
import { WebhookSigningKeys } from "./webhook-signing-keys.ts";

interface LocalExecution {
  id: string;
  crew: string;
  spec: ExecutionSpec;
  status?: ExecutionStatus;
  /** Each task's run of its latest revision (a humanInput task sent back runs again). */
  tasks: Map<string, TaskProcess>;
  /** The results of the runs of earlier revisions, by task. */
  earlierResults: Map<string, TaskResultSpec[]>;
  /** The Authorization header of the human-input webhook the kickoff gave: held here, never in the spec. */
  humanInputAuthorization?: string;
  created: string;
  /** Keys of the webhooks already sent (decide() asks for each once). */
  webhooksSent: Set<string>;
  /** Step webhooks being sent: recorded as sent once they end, so the next step of the task follows in order. */
  stepsSending: Set<string>;
  timer?: NodeJS.Timeout;
  /** The execution's span until it finishes (tracing on): its tasks' runners continue the trace under it. */
  span?: Span;
  /** The trace's id, kept once the span ended (/status's trace_id). */
  traceId?: string;
  /** The execution span's W3C traceparent, kept once it ended: the parent of its webhook deliveries' spans. */
  traceparent?: string;
  /** The logger of the execution's lines: each names its trace (trace_id) when it has one. */
  log: Logger;
  reconciling: boolean;
  again: boolean;
}

export interface LocalExecutionsOptions {
  crews: Crew[];
  workRoot: string;
  runnerCommand: string[];
  runnerEnv: NodeJS.ProcessEnv;
  /** Task processes run at once, across executions; the others wait (KUBECREW_DEV_MAX_TASKS). */
  maxTasks: number;
  log: Logger;
  /** The outbound client's fetch: webhooks go only where the outbound URL policy allows. */
  webhookFetch: typeof fetch;
  /** Connected apps (KUBECREW_APPS_URL and KUBECREW_APPS_SIGNING_KEY set): credentials minted in process. */
  appCredentials?: LocalAppCredentials;
  /** The variables `runtime: crewai` tasks need besides runnerEnv (its Python, made on first use). */
  crewaiEnv?: () => Promise<Record<string, string>>;
  now?: () => Date;
}

/**
 * The embedded default's executions: held in memory, each task a local child process, driven by the same decide()
 * as the Kubernetes controller. This is the local adapter; the API reads it through ExecutionBackend.
 */
export class LocalExecutions implements ExecutionBackend {
  private readonly executions = new Map<string, LocalExecution>();
  /** Kickoffs recorded under an Idempotency-Key, by key hash, oldest first. */
  private readonly keyed = new Map<string, RecordedKickoff & { id: string }>();
  private readonly crews: Map<string, Crew>;
  private readonly options: LocalExecutionsOptions;
  private readonly slots: TaskSlots;
  /** Every crew's webhooks are signed, with a key generated for it (it has no Secret of its own here). */
  private readonly signingKeys = new WebhookSigningKeys();
  private readonly now: () => Date;
  private closed = false;

  constructor(options: LocalExecutionsOptions) {
    this.options = options;
    this.crews = new Map(options.crews.map((c) => [c.metadata.name, c]));
    this.now = options.now ?? (() => new Date());
    this.slots = new TaskSlots(options.maxTasks);
  }

  async getCrew(name: string) {
    return this.crews.get(name);
  }

  heldCrew(name: string): Crew | undefined {
    return this.crews.get(name);
  }

  async listCrews() {
    return [...this.crews.values()];
  }

  webhookSigningSecret(crew: string): string {
    return this.signingKeys.secretFor(crew);
  }

  async createExecution(execution: NewExecution): Promise<KickoffOutcome> {
    const now = this.now();
    const key = execution.idempotency;
    const recorded = key && this.keyed.get(key.keyHash);
    const verdict = key && judgeRecorded(recorded, key, now);
    if (recorded && (verdict === "replay" || verdict === "reused")) {
      return { kind: verdict === "replay" ? "replayed" : "keyReused", id: recorded.id };
    }
    const id = randomUUID();
    const span = startExecutionSpan({ crew: execution.crew, execution: id });
    const traceId = span.isRecording() ? span.spanContext().traceId : undefined;
    const traceparent = traceparentOf(span);
    this.executions.set(id, {
      id,
      crew: execution.crew,
      spec: execution.spec,
      ...(execution.humanInputAuthorization
        ? { humanInputAuthorization: execution.humanInputAuthorization.header }
        : {}),
      created: now.toISOString(),
      tasks: new Map(),
      earlierResults: new Map(),
      webhooksSent: new Set(),
      stepsSending: new Set(),
      span,
      ...(traceId ? { traceId } : {}),
      ...(traceparent ? { traceparent } : {}),
      log: traceId ? this.options.log.child({ trace_id: traceId }) : this.options.log,
      reconciling: false,
      again: false,
    });
    if (key) this.recordKey({ ...key, createdAt: now, id }, now);
    this.reconcile(id);
    return { kind: "started", id };
  }

  /** Records a keyed kickoff (newest last) and forgets the keys whose window has passed. */
  private recordKey(record: RecordedKickoff & { id: string }, now: Date): void {
    this.keyed.delete(record.keyHash);
    this.keyed.set(record.keyHash, record);
    for (const [hash, old] of this.keyed) {
      if (judgeRecorded(old, old, now) !== "expired") break;
      this.keyed.delete(hash);
    }
  }

  async getExecution(crew: string, id: string): Promise<ExecutionView | undefined> {
    return this.heldExecution(crew, id);
  }

  heldExecution(crew: string, id: string): ExecutionView | undefined {
    const execution = this.executions.get(id);
    if (!execution || execution.crew !== crew) return undefined;
    return this.view(execution);
  }

  async listExecutions(crew: string): Promise<ExecutionView[]> {
    return [...this.executions.values()]
      .filter((execution) => execution.crew === crew)
      .reverse()
      .map((execution) => this.view(execution));
  }

  private view(execution: LocalExecution): ExecutionView {
    const { id, crew } = execution;
    // By the task each result is of: a whole project's run (core/whole-project.ts) holds every task's.
    const results = resultsByTask([...execution.tasks.keys()].flatMap((name) => this.observe(execution, name).results));
    return {
      id,
      crew,
      spec: execution.spec,
      created: execution.created,
      results,
      ...(execution.spec.requestedBy ? { requestedBy: execution.spec.requestedBy } : {}),
      ...(execution.status ? { status: execution.status } : {}),
      ...(execution.traceId ? { traceId: execution.traceId } : {}),
    };
  }

  /** At once: nothing else runs between judging the execution and changing it (a compare-and-set in one turn). */
  async recordDecision<T>(
    crew: string,
    id: string,
    judge: (execution: ExecutionView) => { change?: DecisionChange; result: T },
  ): Promise<T | undefined> {
    const execution = this.executions.get(id);
    if (!execution || execution.crew !== crew) return undefined;
    const { change, result } = judge(this.view(execution));
    if (change) {
      execution.spec = {
        ...execution.spec,
        decisions: change.decisions,
        ...(change.webhooks ? { webhooks: change.webhooks } : {}),
      };
      this.reconcile(id);
    }
    return result;
  }

  /** What the world shows of a task: its latest revision's run, with the results of every revision. */
  private observe(execution: LocalExecution, name: string) {
    const observed = execution.tasks.get(name)!.observe();
    const earlier = execution.earlierResults.get(name) ?? [];
    return earlier.length ? { ...observed, results: [...earlier, ...observed.results] } : observed;
  }

  async stopExecution(_crew: string, id: string): Promise<void> {
    const execution = this.executions.get(id);
    if (!execution) return;
    execution.spec = { ...execution.spec, stop: true };
    this.reconcile(id);
  }

  /** The kickoff_ids of every execution held, oldest first. */
  ids(): string[] {
    return [...this.executions.keys()];
  }

  /** The spec an execution was created with (who requested it, as whom it acts), for tests. */
  specOf(id: string): ExecutionSpec | undefined {
    return this.executions.get(id)?.spec;
  }

  /** Stops every task process; used on Ctrl-C. */
  /** Stops every task and resolves once their processes have exited (so nothing writes into the work folder after). */
  async close(): Promise<void> {
    this.closed = true;
    const exits: Promise<void>[] = [];
    for (const execution of this.executions.values()) {
      clearTimeout(execution.timer);
      for (const task of execution.tasks.values()) {
        task.stop();
        exits.push(task.exited());
      }
    }
    await Promise.all(exits);
  }

  /** Level-based: observe everything, decide, act. Serialised per execution; a trigger during a pass runs another. */
  private reconcile(id: string): void {
    const execution = this.executions.get(id);
    if (!execution || this.closed) return;
    if (execution.reconciling) {
      execution.again = true;
      return;
    }
    execution.reconciling = true;
    void this.reconcileOnce(execution)
      .catch((err) => execution.log.error({ err, execution: id }, "Reconcile failed"))
      .finally(() => {
        execution.reconciling = false;
        if (execution.again) {
          execution.again = false;
          this.reconcile(id);
        }
      });
  }

  private async reconcileOnce(execution: LocalExecution): Promise<void> {
    const now = this.now();
    const observed: Record<string, ObservedTask> = {};
    for (const name of execution.tasks.keys()) observed[name] = this.observe(execution, name);
    const decision = decide({
      execution: {
        name: execution.id,
        spec: execution.spec,
        ...(execution.status ? { status: execution.status } : {}),
      },
      crew: this.crews.get(execution.crew)?.spec,
      observed,
      deliveredWebhooks: execution.webhooksSent,
      now,
    });
    for (const action of decision.actions) await this.carryOut(execution, action, now);
    const spec = execution.status?.crewSpec;
    if (execution.span && isFinished(execution.status?.phase)) {
      endExecutionSpan(execution.span, execution.status!.phase!, execution.status?.error);
      execution.span = undefined;
    }
    if (spec && isFinished(execution.status?.phase)) {
      await this.options.appCredentials?.retire({ id: execution.id, spec, startTime: execution.status?.startTime });
    }
    clearTimeout(execution.timer);
    if (decision.requeueAfterSeconds !== undefined) {
      execution.timer = setTimeout(() => this.reconcile(execution.id), decision.requeueAfterSeconds * 1000);
      execution.timer.unref();
    }
  }

  private async carryOut(execution: LocalExecution, action: Action, now: Date): Promise<void> {
    const { log } = execution;
    switch (action.type) {
      case "setStatus":
        execution.status = action.status;
        // Decide again with the status written, as a controller's watch brings its own write back: what is due once
        // a status is on record (a waiting answer's webhooks) goes out then.
        execution.again = true;
        return;
      case "startTask": {
        const revision = action.assignment.task.revision ?? 0;
        const running = () => execution.tasks.get(action.taskName)?.revision === revision;
        if (running()) return;
        const spec = execution.status?.crewSpec ?? this.crews.get(execution.crew)?.spec;
        const started = execution.status?.startTime;
        const appsEnv =
          spec && this.options.appCredentials
            ? await this.options.appCredentials.envFor(
                {
                  id: execution.id,
                  spec,
                  requestedBy: execution.spec.requestedBy,
                  startTime: started ? new Date(started) : now,
                },
                action.assignment,
              )
            : {};
        const crewaiEnv =
          action.assignment.runtime === "crewai" && this.options.crewaiEnv ? await this.options.crewaiEnv() : {};
        if (running()) return;
        // A revision of a humanInput task: the run of the answer sent back is over; its results stay in view.
        const previous = execution.tasks.get(action.taskName);
        if (previous) {
          const earlier = execution.earlierResults.get(action.taskName) ?? [];
          execution.earlierResults.set(action.taskName, [...earlier, ...previous.observe().results]);
        }
        const task = new TaskProcess({
          assignment: action.assignment,
          retries: spec?.runner.retries ?? 0,
          workDir: join(
            this.options.workRoot,
            execution.id,
            revision ? `${action.index}-r${revision}` : String(action.index),
          ),
          runnerCommand: this.options.runnerCommand,
          env: { ...this.options.runnerEnv, ...appsEnv, ...crewaiEnv, ...traceEnv(execution.span) },
          log,
          slots: this.slots,
          onChange: () => this.reconcile(execution.id),
        });
        execution.tasks.set(action.taskName, task);
        await task.start();
        return;
      }
      case "stopTask":
        execution.tasks.get(action.taskName)?.stop();
        return;
      case "event": {
        const line = { execution: execution.id, crew: execution.crew, reason: action.reason };
        if (action.eventType === "Warning") log.warn(line, action.message);
        else log.info(line, action.message);
        return;
      }
      case "webhook": {
        if (execution.webhooksSent.has(action.hook) || execution.stepsSending.has(action.hook)) return;
        // The same delivery id as a cluster's, with the run's id in place of the CrewExecution's uid.
        const identity = {
          delivery: `${execution.id}/${action.hook}`,
          event: action.kind,
          // AMP's human-input webhook carries the credentials its kickoff gave.
          ...(action.kind === "human_input" && execution.humanInputAuthorization
            ? { authorization: execution.humanInputAuthorization }
            : {}),
          trace: { traceparent: execution.traceparent, execution: execution.id, hook: action.hook },
        };
        const secret = this.signingKeys.secretFor(execution.crew);
        const deps = { log, fetch: this.options.webhookFetch, now: this.now };
        if (action.kind === "step") {
          // decide() asks for a task's next step only once this one is recorded: one at a time, in order.
          execution.stepsSending.add(action.hook);
          void deliverWebhook(action.url, action.payload, deps, secret, identity).finally(() => {
            execution.stepsSending.delete(action.hook);
            execution.webhooksSent.add(action.hook);
            this.reconcile(execution.id);
          });
          return;
        }
        execution.webhooksSent.add(action.hook);
        void deliverWebhook(action.url, action.payload, deps, secret, identity);
        return;
      }
    }
  }
}
