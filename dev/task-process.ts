import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ObservedTask } from "../core/observed-task.ts";
import type { Logger } from "../core/logger.ts";
import { taskOutcome, type TaskAssignment, type TaskOutcome } from "../core/task-assignment.ts";
import type { TaskResultSpec } from "../core/task-result.ts";
import type { TaskSlots } from "./task-slots.ts";
import { liveSteps, type LiveSteps } from "./live-steps.ts";
import { projectResults, readProjectOutcomes, watchProjectOutcomes } from "./project-outcomes.ts";

export interface TaskProcessOptions {
  assignment: TaskAssignment;
  /** Retries after a failed attempt, as a Job's backoffLimit. */
  retries: number;
  workDir: string;
  /** argv that runs `kubecrew runner` (the CLI entry and its runtime). */
  runnerCommand: string[];
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** Its process starts when one of these is free and holds it until the task has ended (retries included). */
  slots: TaskSlots;
  onChange(): void;
}

/**
 * One task run in the embedded default: what a Job is in Kubernetes. Runs `kubecrew runner` as a child process once
 * a task slot is free (until then it is running with nothing started, as a Job whose pod waits for a node), retries
 * a failed attempt up to `retries` times, and keeps every attempt's outcome.
 */
export class TaskProcess {
  private child: ChildProcess | undefined;
  private attempt = 0;
  private state: "running" | "succeeded" | "failed" = "running";
  private reason: string | undefined;
  private message: string | undefined;
  private readonly startTime = new Date().toISOString();
  private readonly results: TaskResultSpec[] = [];
  private stopped = false;
  private holdsSlot = false;
  private cancelWait: () => void = () => {};
  /** The running attempt's steps so far, read from its steps file. */
  private live: LiveSteps | undefined;
  /** A whole project's run (assignment.project): the outcomes of the tasks that ended so far in the running attempt. */
  private projectOutcomes: TaskOutcome[] = [];
  private readonly options: TaskProcessOptions;

  constructor(options: TaskProcessOptions) {
    // A whole project's run is not retried: a retry would run the tasks that already reported again. Nor is a tool
    // call (a flow's tool method): CrewAI calls a tool once (a Job's podFailurePolicy on a cluster, controller/task-job.ts).
    const once = options.assignment.project || options.assignment.task.toolCall;
    this.options = once ? { ...options, retries: 0 } : options;
  }

  async start(): Promise<void> {
    await mkdir(this.options.workDir, { recursive: true });
    await writeFile(this.assignmentPath, JSON.stringify(this.options.assignment));
    if (this.stopped) return;
    this.cancelWait = this.options.slots.whenFree(() => {
      this.holdsSlot = true;
      this.spawnAttempt();
    });
  }

  observe(): ObservedTask {
    const { assignment } = this.options;
    // The running attempt as a result without output or error (what a CrewTaskResult is while its pod runs): its
    // steps so far. successfulResult() and failures ignore it.
    // A whole project's run: the steps of the task it runs now.
    const live = this.live && this.state === "running" && this.live.attempt === this.attempt ? this.live : undefined;
    const { task, ...sofar } = live?.sofar ?? { steps: [], stepCount: 0, toolsUsed: [] };
    const progress: TaskResultSpec[] = live
      ? [
          {
            executionRef: { name: assignment.execution.id },
            taskName: task?.name ?? assignment.task.name,
            taskIndex: task?.index ?? assignment.task.index,
            agent: task ? task.agent : assignment.agent.role,
            attempt: live.attempt,
            executionTime: 0,
            ...sofar,
          },
        ]
      : [];
    // A humanInput task's revision runs as a run of its own: its results say which answer they are.
    const revision = this.revision;
    // A whole project's run: the tasks that ended so far (until the attempt's end moves them to its results).
    const ended = projectResults(assignment, this.attempt, this.projectOutcomes, undefined);
    const results = [...this.results, ...ended, ...progress];
    return {
      run: {
        state: this.state,
        startTime: this.startTime,
        reason: this.reason,
        message: this.message,
        ...(revision ? { revision } : {}),
      },
      results: revision ? results.map((r) => ({ ...r, revision })) : results,
    };
  }

  /** Which answer of its task this run gives: 0 the first, then one per revision a person asked for. */
  get revision(): number {
    return this.options.assignment.task.revision ?? 0;
  }

  /** Kills the running attempt; the run ends as failed with reason Stopped. */
  stop(): void {
    this.stopped = true;
    if (this.state === "running") {
      this.state = "failed";
      this.reason = "Stopped";
      this.message = "stopped";
    }
    this.cancelWait();
    if (!this.child) this.releaseSlot();
    this.kill();
  }

  /** Resolves once the running attempt's process (if any) has exited; a stopped one is SIGKILLed after 2 s. */
  exited(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    return new Promise((resolve) => child.once("close", () => resolve()));
  }

  private outcomesPath(attempt: number) {
    return join(this.options.workDir, `outcomes-${attempt}.json`);
  }

  private get assignmentPath() {
    return join(this.options.workDir, "assignment.json");
  }

  private spawnAttempt(): void {
    this.attempt += 1;
    const outcomePath = join(this.options.workDir, `outcome-${this.attempt}.json`);
    const stepsPath = join(this.options.workDir, `steps-${this.attempt}.json`);
    const [command, ...args] = this.options.runnerCommand;
    const { assignment, log } = this.options;
    const attempt = this.attempt;
    const stopWatching = liveSteps(stepsPath, (sofar) => {
      this.live = { attempt, sofar };
      this.options.onChange();
    });
    const runnerArgs = ["runner", "--assignment", this.assignmentPath, "--outcome", outcomePath, "--steps", stepsPath];
    const stopWatchingOutcomes = assignment.project
      ? watchProjectOutcomes(this.outcomesPath(attempt), (outcomes) => {
          this.projectOutcomes = outcomes;
          this.options.onChange();
        })
      : () => {};
    if (assignment.project) runnerArgs.push("--outcomes", this.outcomesPath(attempt));
    const child = spawn(command!, [...args, ...runnerArgs], {
      env: { ...this.options.env, KUBECREW_TASK_ATTEMPT: String(this.attempt) },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    this.child = child;
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096);
    });
    child.once("error", (err) => {
      stderr += String(err.message);
    });
    child.once("close", (code, signal) => {
      stopWatching();
      stopWatchingOutcomes();
      this.child = undefined;
      if (this.stopped) this.releaseSlot();
      void this.attemptEnded(outcomePath, code, signal, stderr).catch((err) => {
        log.error({ err, task: assignment.task.name }, "Could not read a task outcome");
      });
    });
    log.info({ execution: assignment.execution.id, task: assignment.task.name, attempt: this.attempt }, "Task started");
  }

  private async attemptEnded(outcomePath: string, code: number | null, signal: string | null, stderr: string) {
    const { assignment, log } = this.options;
    const outcome = await readFile(outcomePath, "utf8")
      .then((text) => taskOutcome.parse(JSON.parse(text)))
      .catch(() => undefined);
    await rm(outcomePath, { force: true });
    await rm(join(this.options.workDir, `steps-${this.attempt}.json`), { force: true });
    if (assignment.project) {
      // Every task that ended keeps its result, even when the run was stopped after it.
      const outcomes = await readProjectOutcomes(this.outcomesPath(this.attempt));
      this.results.push(...projectResults(assignment, this.attempt, outcomes, this.stopped ? undefined : outcome));
      this.projectOutcomes = [];
    }
    if (this.stopped) return this.options.onChange();
    if (outcome && !assignment.project) {
      this.results.push({
        executionRef: { name: assignment.execution.id },
        taskName: outcome.taskName,
        taskIndex: outcome.taskIndex,
        agent: outcome.agent,
        attempt: this.attempt,
        executionTime: outcome.executionTime,
        tokenUsage: outcome.tokenUsage,
        ...(outcome.model ? { model: outcome.model } : {}),
        ...(outcome.stepCount !== undefined
          ? { steps: outcome.steps ?? [], stepCount: outcome.stepCount, toolsUsed: outcome.toolsUsed ?? [] }
          : {}),
        ...(outcome.output !== undefined && outcome.error === undefined ? { output: outcome.output } : {}),
        ...(outcome.jsonDict !== undefined && outcome.error === undefined ? { jsonDict: outcome.jsonDict } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        ...(outcome.parked !== undefined && outcome.error === undefined ? { parked: outcome.parked } : {}),
      });
    }
    this.live = undefined; // the attempt's result (pushed above) carries its steps from now on
    // A loop parked on held tool calls ended well: the task waits for people, no process held.
    const succeeded =
      code === 0 && (outcome?.output !== undefined || outcome?.parked !== undefined) && outcome.error === undefined;
    if (succeeded) {
      this.state = "succeeded";
      this.releaseSlot();
    } else if (this.attempt <= this.options.retries) {
      log.warn({ task: assignment.task.name, attempt: this.attempt, code, signal }, "Task attempt failed; retrying");
      this.spawnAttempt();
      return;
    } else {
      this.state = "failed";
      this.reason = "BackoffLimitExceeded";
      this.message = outcome?.error ?? (stderr.trim().split("\n").at(-1) || `runner exited with ${code ?? signal}`);
      this.releaseSlot();
    }
    this.options.onChange();
  }

  /** Once: the slot goes to the next waiting task when this one's last process has exited. */
  private releaseSlot(): void {
    if (!this.holdsSlot) return;
    this.holdsSlot = false;
    this.options.slots.release();
  }

  private kill(): void {
    const child = this.child;
    if (!child?.pid) return;
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      return;
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, 2000).unref();
  }
}
