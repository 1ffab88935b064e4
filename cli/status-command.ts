import type { Command } from "commander";
import type { StatusResponse } from "../core/api-bodies.ts";
import { withApiClient, withApiOptions, type ApiOptions } from "./api-command.ts";
import { locateExecution } from "./execution-locator.ts";
import { exitStatus, failedOrStopped } from "./exit-status.ts";
import { plural, seconds } from "./execution-text.ts";
import { BodyPrinter } from "./output-format.ts";
import { printable, Terminal } from "./terminal.ts";

interface StatusOptions extends ApiOptions {
  crew?: string;
}

/** `kubecrew status ID`: an execution's status (GET /crews/{crew}/status/{id}). */
export function registerStatusCommand(program: Command): void {
  withApiOptions(
    program
      .command("status")
      .description("Show the status of a run: running (which task), completed (each task's output) or error")
      .argument("<id>", "the run's kickoff ID")
      .option("--crew <crew>", "the run's crew (default: looked up among the crews the token may use)"),
  ).action(async (id: string, options: StatusOptions) => {
    await withApiClient("status", options, async (client) => {
      const { crew, status } = await locateExecution(client, id, options.crew);
      if (options.output !== "text") new BodyPrinter(options.output).print(status);
      else printStatus(new Terminal(), id, crew, status);
    });
  });
}

function printStatus(term: Terminal, id: string, crew: string, status: StatusResponse): void {
  term.line(`ID:      ${id}`);
  term.line(`Crew:    ${crew}`);
  if (status.status === "running") {
    const { completed_tasks: done, total_tasks: total } = status.progress;
    term.line(
      `Status:  ${term.style("cyan", "running")} · task ${printable(status.current_task)} · ${done}/${total} done`,
    );
    const waiting = status.pending_human_input;
    if (waiting) {
      term.line(
        `Waiting: ${term.style("yellow", "for a person")} to review the answer of task ${printable(waiting.task_id)}:`,
      );
      term.line(printable(waiting.output));
      term.line(`Answer with: kubecrew resume ${id} --approve, or --feedback "what to change"`);
    }
    return;
  }
  if (status.status === "error") {
    const stopped = failedOrStopped(status.error) === exitStatus.stopped;
    term.line(`Status:  ${stopped ? term.style("yellow", "stopped") : term.style("red", "error")}`);
    term.line(`Time:    ${seconds(status.execution_time)}`);
    term.line(`Error:   ${printable(status.error)}`);
    return;
  }
  term.line(`Status:  ${term.style("green", "completed")}`);
  term.line(`Time:    ${seconds(status.execution_time)}`);
  term.line("Tasks:");
  for (const task of status.result.tasks) {
    const steps = task.steps !== undefined ? ` · ${plural(task.steps, "step")}` : "";
    term.line(`  ✓ ${printable(task.task_id)} · ${seconds(task.execution_time)}${steps} · ${printable(task.agent)}`);
  }
  term.line("Output:");
  term.line(printable(status.result.output));
}
