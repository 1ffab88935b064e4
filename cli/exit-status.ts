import { EXECUTION_STOPPED_ERROR } from "../core/execution.ts";

/** The exit statuses of `kubecrew run --watch` (docs/cli.md lists them). */
export const exitStatus = {
  /** The run completed. */
  completed: 0,
  /** The run failed, or the command did (the API refused it, could not be reached, a wrong argument). */
  failed: 1,
  /** The run was stopped (`kubecrew stop`, POST /stop). */
  stopped: 3,
  /** Ctrl-C while watching: the watching ended, the run goes on (128 + SIGINT, as a shell reports it). */
  interrupted: 130,
} as const;

/** How a run that ended with this error ended: stopped or failed. */
export const failedOrStopped = (error: string) =>
  error === EXECUTION_STOPPED_ERROR ? exitStatus.stopped : exitStatus.failed;
