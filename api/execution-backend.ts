import type { Crew } from "../core/crew.ts";
import type { ExecutionSpec, ExecutionStatus, Requester } from "../core/execution.ts";
import type { TaskResultSpec } from "../core/task-result.ts";

/** One execution as the API sees it: enough to answer /status and to check who may read it. */
export interface ExecutionView {
  id: string;
  crew: string;
  requestedBy?: Requester;
  spec: ExecutionSpec;
  status?: ExecutionStatus;
  /** Runner results by task name (every attempt). */
  results: Record<string, TaskResultSpec[]>;
}

export interface NewExecution {
  id: string;
  crew: string;
  spec: ExecutionSpec;
}

/**
 * Where the API keeps executions: in memory with local child processes (`kubecrew dev`), or CrewExecution objects
 * in Kubernetes read through informer caches (`kubecrew api`). The routes are the same for both.
 */
export interface ExecutionBackend {
  getCrew(name: string): Promise<Crew | undefined>;
  listCrews(): Promise<Crew[]>;
  createExecution(execution: NewExecution): Promise<void>;
  getExecution(crew: string, id: string): Promise<ExecutionView | undefined>;
  /** Asks the execution to stop; the caller has checked that it exists and is not finished. */
  stopExecution(crew: string, id: string): Promise<void>;
}
