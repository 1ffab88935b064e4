import { KubecrewError } from "../core/errors.ts";

/** A failure a command reports in one line (no stack trace) before it exits non-zero. */
export class CommandFailure extends KubecrewError {
  readonly code = "command_failed";
  /** The exit status: 1 unless the command documents another. */
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}
