import type { Command } from "commander";
import type { ExecutionEventBody } from "../core/execution-event-bodies.ts";
import { withApiClient, withApiOptions, type ApiOptions } from "./api-command.ts";
import { readExecutionEvents } from "./execution-events-reader.ts";
import { locateExecution } from "./execution-locator.ts";
import { plural, seconds, stepHeading } from "./execution-text.ts";
import { BodyPrinter } from "./output-format.ts";
import { printable, Terminal } from "./terminal.ts";

interface LogsOptions extends ApiOptions {
  crew?: string;
  follow?: boolean;
}

/**
 * How long the event stream of a running execution must be quiet before `logs` without --follow ends: the API sends
 * every event it has as soon as the stream opens, so this is the events so far.
 */
const SO_FAR_QUIET_MS = 1_000;

/** `kubecrew logs ID [-f]`: the steps of each task of a run (its event stream, GET …/status/{id}/events). */
export function registerLogsCommand(program: Command): void {
  withApiOptions(
    program
      .command("logs")
      .description("Show the steps of each task of a run: LLM turns and tool calls, with their texts")
      .argument("<id>", "the run's kickoff ID")
      .option("--crew <crew>", "the run's crew (default: looked up among the crews the token may use)")
      .option("-f, --follow", "follow a running run until it ends"),
  ).action(async (id: string, options: LogsOptions) => {
    await withApiClient("logs", options, async (client) => {
      const { crew, status } = await locateExecution(client, id, options.crew);
      const quiet = status.status === "running" && !options.follow ? { quietMs: SO_FAR_QUIET_MS } : {};
      const printer = options.output === "text" ? undefined : new BodyPrinter(options.output);
      const show = printer ? (e: ExecutionEventBody) => printer.print(e) : logLines(new Terminal());
      for await (const event of readExecutionEvents(client, crew, id, quiet)) show(event);
    });
  });
}

/** The events as text: a heading per task, each step with its full input, output or error, then how the task ended. */
function logLines(term: Terminal): (e: ExecutionEventBody) => void {
  const indented = (label: string, text: string, style?: "red") => {
    const lines = printable(text).split("\n");
    term.line(`    ${style ? term.style(style, label) : label} ${lines[0]}`);
    for (const line of lines.slice(1)) term.line(`    ${" ".repeat(label.length)} ${line}`);
  };
  return (e) => {
    switch (e.event) {
      case "task_started":
        term.line(term.style("bold", `${printable(e.task_id)}`) + term.style("dim", ` started ${e.started_at}`));
        break;
      case "step":
        term.line(`  step ${e.step.index} · ${stepHeading(e.step, e.attempt)}`);
        if (e.step.input !== undefined) indented("input: ", e.step.input);
        if (e.step.output !== undefined) indented("output:", e.step.output);
        if (e.step.error !== undefined) indented("error: ", e.step.error, "red");
        break;
      case "task_completed":
        term.line(
          term.style("green", `  ✓ completed`) +
            ` in ${seconds(e.execution_time)}${e.steps !== undefined ? ` · ${plural(e.steps, "step")}` : ""}`,
        );
        break;
      case "human_input_requested":
        term.line(
          term.style("yellow", "  ⏸ waited for a person") +
            (e.revision > 0 ? ` (revision ${e.revision})` : "") +
            term.style("dim", ` since ${e.requested_at}`),
        );
        break;
      case "tool_call_held":
        term.line(
          term.style("yellow", `  ⏸ held ${printable(e.tool)} for approval`) +
            ` (tool_call_id ${printable(e.tool_call_id)}${e.acts_as ? `, acting as ${printable(e.acts_as)}` : ""})` +
            term.style("dim", ` since ${e.requested_at}`),
        );
        break;
      case "task_failed":
        term.line(term.style("red", `  ✗ failed: ${printable(e.error)}`));
        break;
      case "execution_completed":
        term.line(term.style("green", `Run completed in ${seconds(e.execution_time)}`));
        break;
      case "execution_failed":
        term.line(term.style("red", `Run ended after ${seconds(e.execution_time)}: ${printable(e.error)}`));
        break;
    }
  };
}
