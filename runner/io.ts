import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { taskAssignment, taskOutcome, type TaskAssignment, type TaskOutcome } from "../core/task-assignment.ts";
import type { StepSummary, StepTask } from "./step-recorder.ts";
import { KubecrewError } from "../core/errors.ts";

/**
 * Where a runner gets its task and where it reports the outcome. The embedded mode uses files; in a Job pod the
 * assignment comes from the task's ConfigMap and the outcome goes into a CrewTaskResult.
 */
export interface TaskIO {
  readAssignment(): Promise<TaskAssignment>;
  reportOutcome(outcome: TaskOutcome): Promise<void>;
  /**
   * The task's steps so far, while it runs (optional: where nobody watches, they come with the outcome only); in a whole
   * project's run, `task` says which of its tasks they are of.
   */
  reportSteps?(sofar: StepSummary, attempt: number, task?: StepTask): Promise<void>;
  /** A whole project's run (assignment.project): each task's outcome as the task ends, before the run's last. */
  reportTaskOutcome?(outcome: TaskOutcome): Promise<void>;
}

/** The problem with an assignment that cannot be read or does not match the schema. */
export class AssignmentError extends KubecrewError {
  readonly code = "invalid_assignment";
  override name = "AssignmentError";
}

export function parseAssignment(text: string, source: string): TaskAssignment {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AssignmentError(`Assignment ${source} is not JSON: ${(error as Error).message}`);
  }
  const parsed = taskAssignment.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new AssignmentError(`Assignment ${source} is invalid: ${problems}`);
  }
  return parsed.data;
}

/** The assignment in the JSON file at `path`; an AssignmentError naming the file when it cannot be read or used. */
export async function readAssignmentFile(path: string): Promise<TaskAssignment> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new AssignmentError(`Cannot read assignment ${path}: ${(error as Error).message}`);
  }
  return parseAssignment(text, path);
}

/** Writes `text` to `path` so that a reader sees either the old file or the whole new one, never a part. */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const file = await open(temp, "w", 0o600);
  try {
    await file.writeFile(text, "utf8");
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * The assignment from a JSON file, the outcome as a JSON file (written atomically), and, when a steps file is given,
 * the steps so far, rewritten whole (atomically) after each step: `kubecrew dev` reads it while the task runs.
 */
export class FileTaskIO implements TaskIO {
  readonly assignmentPath: string;
  readonly outcomePath: string;
  readonly stepsPath: string | undefined;
  readonly reportSteps: ((sofar: StepSummary, attempt: number, task?: StepTask) => Promise<void>) | undefined;
  readonly reportTaskOutcome: ((outcome: TaskOutcome) => Promise<void>) | undefined;

  /** `outcomes`: where a whole project's run keeps its tasks' outcomes so far (a JSON array, rewritten whole). */
  constructor(paths: { assignment: string; outcome: string; steps?: string; outcomes?: string }) {
    this.assignmentPath = paths.assignment;
    this.outcomePath = paths.outcome;
    this.stepsPath = paths.steps;
    const stepsPath = paths.steps;
    // A project's tasks run one at a time: the file holds the running one's steps, and says which task that is.
    this.reportSteps = stepsPath
      ? (sofar, _attempt, task) =>
          writeFileAtomically(stepsPath, JSON.stringify(task ? { ...sofar, task } : sofar) + "\n")
      : undefined;
    const outcomesPath = paths.outcomes;
    const sofar: TaskOutcome[] = [];
    this.reportTaskOutcome = outcomesPath
      ? (outcome) => {
          sofar.push(taskOutcome.parse(outcome));
          return writeFileAtomically(outcomesPath, JSON.stringify(sofar) + "\n");
        }
      : undefined;
  }

  readAssignment(): Promise<TaskAssignment> {
    return readAssignmentFile(this.assignmentPath);
  }

  async reportOutcome(outcome: TaskOutcome): Promise<void> {
    await writeFileAtomically(this.outcomePath, JSON.stringify(taskOutcome.parse(outcome)) + "\n");
  }
}
