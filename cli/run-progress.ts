import type { ExecutionEventBody } from "../core/execution-event-bodies.ts";
import { failedOrStopped, exitStatus } from "./exit-status.ts";
import { plural, seconds, stepHeading } from "./execution-text.ts";
import { cut, printable, type Terminal } from "./terminal.ts";

/**
 * `kubecrew run --watch` in text: a line per task start, step and task end as the events come, then how the run ended
 * and its output. On a terminal a live line below says which task runs, how many are done and for how long.
 */
export class RunProgress {
  private readonly startedAt = Date.now();
  /** Tasks started and not ended: several at once when the crew runs tasks side by side. */
  private readonly running = new Set<string>();
  private doneTasks = 0;

  private readonly term: Terminal;
  private readonly totalTasks: number | undefined;

  constructor(term: Terminal, totalTasks: number | undefined) {
    this.term = term;
    this.totalTasks = totalTasks;
    term.live(() => this.liveText());
  }

  event(e: ExecutionEventBody): void {
    const { term } = this;
    switch (e.event) {
      case "task_started":
        this.running.add(e.task_id);
        term.line(term.style("bold", `▶ ${printable(e.task_id)}`));
        break;
      case "step": {
        const heading = stepHeading(e.step, e.attempt);
        const detail = e.step.error
          ? term.style("red", `error: ${printable(e.step.error)}`)
          : term.style("dim", cut(printable(e.step.output ?? e.step.input ?? ""), term.width - 7));
        term.line(`    ${this.running.size > 1 ? `${printable(e.task_id)}: ` : ""}${heading}`);
        if (e.step.error || e.step.output || e.step.input) term.line(`      ${detail}`);
        break;
      }
      case "task_completed":
        this.running.delete(e.task_id);
        this.doneTasks++;
        term.line(
          `${term.style("green", `✓ ${printable(e.task_id)}`)} ${[
            seconds(e.execution_time),
            ...(e.steps !== undefined ? [plural(e.steps, "step")] : []),
            ...(e.tools_used?.length ? [`tools: ${e.tools_used.map(printable).join(", ")}`] : []),
            printable(e.agent),
          ].join(" · ")}`,
        );
        break;
      case "human_input_requested":
        term.line(
          `${term.style("yellow", `⏸ ${printable(e.task_id)} waits for a person`)}: ` +
            `kubecrew resume ${printable(e.kickoff_id)} --approve, or --feedback "what to change"`,
        );
        break;
      case "tool_call_held":
        term.line(
          `${term.style("yellow", `⏸ ${printable(e.task_id)} holds a call of ${printable(e.tool)} for approval`)}: ` +
            `approve or deny it in the console's Waiting for you, or POST /resume with tool_call_id ${printable(e.tool_call_id)}`,
        );
        break;
      case "task_failed":
        this.running.delete(e.task_id);
        term.line(term.style("red", `✗ ${printable(e.task_id)}: ${printable(e.error)}`));
        break;
      case "execution_completed":
        term.live(undefined);
        term.line(term.style(["green", "bold"], `✓ completed in ${seconds(e.execution_time)}`));
        term.line();
        term.line(printable(e.output));
        break;
      case "execution_failed":
        term.live(undefined);
        term.line(
          failedOrStopped(e.error) === exitStatus.stopped
            ? term.style(["yellow", "bold"], `■ stopped after ${seconds(e.execution_time)}`)
            : term.style(["red", "bold"], `✗ failed after ${seconds(e.execution_time)}`),
        );
        break;
    }
  }

  /** Removes the live line (the watching ended early). */
  end(): void {
    this.term.live(undefined);
  }

  private liveText(): string {
    const elapsed = seconds((Date.now() - this.startedAt) / 1000);
    const tasks = this.totalTasks
      ? `${this.doneTasks}/${this.totalTasks} tasks done`
      : plural(this.doneTasks, "task") + " done";
    return [
      this.running.size ? `running ${[...this.running].map(printable).join(", ")}` : "waiting for a task to start",
      tasks,
      elapsed,
    ].join(" · ");
  }
}
