import type { Crew } from "../core/crew.ts";
import type { ExecutionSpec, ExecutionStatus, Requester } from "../core/execution.ts";
import type { Decision } from "../core/human-input-schema.ts";
import type { IdempotentKickoff } from "../core/idempotency.ts";
import type { TaskResultSpec } from "../core/task-result.ts";

/** One execution as the API sees it: enough to answer /status and to check who may read it. */
export interface ExecutionView {
  id: string;
  crew: string;
  requestedBy?: Requester;
  spec: ExecutionSpec;
  /** When the kickoff created it (ISO 8601). */
  created?: string;
  status?: ExecutionStatus;
  /** Runner results by task name (every attempt). */
  results: Record<string, TaskResultSpec[]>;
  /** The execution's OpenTelemetry trace id, when tracing was on at its kickoff. */
  traceId?: string;
}

export interface NewExecution {
  crew: string;
  spec: ExecutionSpec;
  /**
   * The Authorization header's value for spec.humanInputWebhook (a secret): the backend keeps it apart from the spec
   * (a Secret owned by the execution, or memory) and names where in spec.humanInputWebhook.authentication.
   */
  humanInputAuthorization?: { strategy: "bearer" | "basic"; header: string };
  /** Present when the kickoff carried an Idempotency-Key: a retry answers the run the key already started. */
  idempotency?: IdempotentKickoff;
}

/**
 * What a kickoff did: `started` a run (its id is the kickoff_id), found the run an earlier kickoff under the same key
 * started (`replayed`), or found that run started with a different body (`keyReused`, a 422).
 */
export interface KickoffOutcome {
  kind: "started" | "replayed" | "keyReused";
  id: string;
}

/**
 * A change of an execution's spec that a person's decision makes: spec.decisions as they become (one appended), and
 * the webhook URLs that replace the execution's (absent: they stay).
 */
export interface DecisionChange {
  decisions: Decision[];
  webhooks?: NonNullable<ExecutionSpec["webhooks"]>;
}

/**
 * Where the API keeps executions: in memory with local child processes (`kubecrew dev`), or CrewExecution objects
 * in Kubernetes read through informer caches (`kubecrew api`). The routes are the same for both.
 */
export interface ExecutionBackend {
  getCrew(name: string): Promise<Crew | undefined>;
  listCrews(): Promise<Crew[]>;
  /** Starts a run under a new kickoff_id, or answers the one an Idempotency-Key already started. */
  createExecution(execution: NewExecution): Promise<KickoffOutcome>;
  getExecution(crew: string, id: string): Promise<ExecutionView | undefined>;
  /**
   * What the backend holds at once, without reading through or waiting: the crew, and the crew's execution (the
   * informer cache's, or the local one). Undefined when it does not hold it: getCrew/getExecution then decide. A
   * status poll is answered with them from the status route's cache (api/routes/status-route.ts).
   */
  heldCrew?(name: string): Crew | undefined;
  heldExecution?(crew: string, id: string): ExecutionView | undefined;
  /**
   * The secret that signs the crew's webhooks, where the backend holds it (`kubecrew dev`). Without it the API names
   * the Secret the Crew's status names (a cluster: the controller holds the key, the API cannot read Secrets).
   */
  webhookSigningSecret?(crew: string): string;
  /** The crew's executions, newest first (the console's list). */
  listExecutions(crew: string): Promise<ExecutionView[]>;
  /** Asks the execution to stop; the caller has checked that it exists and is not finished. */
  stopExecution(crew: string, id: string): Promise<void>;
  /**
   * Records a person's decision: `judge` looks at the execution as it is and answers the change to make (if any) and
   * the result to return; the change is written only if the execution is still the version judged (a resourceVersion
   * precondition, or at once in memory), else it is read again and judged again — so of two decisions on one wait
   * exactly one is recorded. Undefined when the execution is not there.
   */
  recordDecision?<T>(
    crew: string,
    id: string,
    judge: (execution: ExecutionView) => { change?: DecisionChange; result: T },
  ): Promise<T | undefined>;
  /**
   * Calls `listener` whenever execution `id` or one of its results changes, until the answer is called; the event
   * stream then reads it again at once instead of polling. A backend without it is polled.
   */
  onExecutionChange?(id: string, listener: () => void): () => void;
}
