import type { CrewSpec } from "./crew.ts";
import type { ExecutionSpec, ExecutionStatus } from "./execution.ts";
import type { JsonObject } from "./json.ts";
import type { ObservedTask } from "./observed-task.ts";
import type { TaskAssignment } from "./task-assignment.ts";

/** What decide() (decide.ts) is given and what it answers: the shapes every observer and apply side shares. */

export interface DecideInput {
  execution: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    spec: ExecutionSpec;
    status?: ExecutionStatus;
  };
  /** The live crew, or undefined when it does not exist; once started, the execution's own snapshot is used. */
  crew: CrewSpec | undefined;
  /** Observed tasks by task name. */
  observed: Record<string, ObservedTask>;
  /** Keys of the webhooks already delivered or given up (see due-webhooks.ts): not due again. None when absent. */
  deliveredWebhooks?: ReadonlySet<string>;
  /**
   * Whether a task due to start may start now (the controller's limit on tasks starting at once): false, or false for
   * that task's name, and it waits, recorded as Pending; a new execution none of whose tasks may start stays as it is
   * (Pending). Every task may start when absent.
   */
  canStartTask?: boolean | ((taskName: string) => boolean);
  now: Date;
}

export type Action =
  | { type: "startTask"; index: number; taskName: string; assignment: TaskAssignment }
  | { type: "stopTask"; index: number; taskName: string; /** absent: 0 */ revision?: number }
  | { type: "setStatus"; status: ExecutionStatus }
  | { type: "event"; eventType: "Normal" | "Warning"; reason: EventReason; message: string }
  | { type: "webhook"; hook: string; kind: WebhookKind; url: string; payload: JsonObject };

/**
 * task, step and crew: the kickoff's webhook URLs; human_input: its humanInputWebhook (AMP's); method and flow: a flow
 * run's (its kickoff's taskWebhookUrl and crewWebhookUrl, core/flow-webhooks.ts).
 */
export type WebhookKind = "task" | "step" | "crew" | "human_input" | "method" | "flow";

export type EventReason =
  | "TaskStarted"
  | "TaskSucceeded"
  | "TaskFailed"
  | "HumanInputRequested"
  | "ToolCallApprovalRequested"
  | "ExecutionSucceeded"
  | "ExecutionFailed"
  | "ExecutionStopped";

/**
 * Carry the actions out in the order given and stop at the first one that fails (then decide again later). The order
 * is: child runs (startTask, stopTask), webhooks, the status, events. The status is written only after what it records
 * has happened, so a crash in between makes the next decision repeat the work instead of losing it (a startTask for a
 * run that already exists must be a no-op: deterministic names), and a status that records a started task means its
 * run was created, so a run the caches do not show yet is waited for instead of started again.
 */
export interface Decision {
  actions: Action[];
  /** Look again after this many seconds even if nothing changes (the next deadline). */
  requeueAfterSeconds?: number;
}
