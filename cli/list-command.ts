import type { Command } from "commander";
import type { ExecutionSummary } from "../api/routes/listing-bodies.ts";
import { withApiClient, withApiOptions, type ApiOptions } from "./api-command.ts";
import { seconds } from "./execution-text.ts";
import { BodyPrinter } from "./output-format.ts";
import { table } from "./table.ts";
import { printable } from "./terminal.ts";

interface ListOptions extends ApiOptions {
  crew?: string;
}

type Listed = ExecutionSummary & { crew: string };

/**
 * `kubecrew list [--crew C]`: runs, newest first (GET /crews/{crew}/executions: the API keeps the latest 100 of each
 * crew; a user token sees only its own). Without --crew every crew the token may use is listed.
 */
export function registerListCommand(program: Command): void {
  withApiOptions(
    program
      .command("list")
      .description("List runs, newest first, with their status and progress")
      .option("--crew <crew>", "only this crew's runs (default: every crew the token may use)"),
  ).action(async (options: ListOptions) => {
    await withApiClient("list", options, async (client) => {
      if (options.crew !== undefined && options.output !== "text") {
        new BodyPrinter(options.output).print(await client.executions(options.crew));
        return;
      }
      const crews = options.crew !== undefined ? [options.crew] : (await client.crews()).crews.map((c) => c.name);
      const listed: Listed[] = [];
      for (const crew of crews) {
        for (const e of (await client.executions(crew)).executions) listed.push({ crew, ...e });
      }
      listed.sort((a, b) => (b.created ?? "").localeCompare(a.created ?? ""));
      // Every crew at once: the API's execution bodies, each with its crew's name.
      if (options.output !== "text") new BodyPrinter(options.output).print({ executions: listed });
      else process.stdout.write(listText(listed));
    });
  });
}

function listText(listed: Listed[]): string {
  if (!listed.length) return "No runs.\n";
  return table(
    ["KICKOFF_ID", "CREW", "STATUS", "PROGRESS", "CURRENT_TASK", "DURATION", "CREATED", "BY"],
    listed.map((e) => [
      e.kickoff_id,
      printable(e.crew),
      e.status,
      `${e.progress.completed_tasks}/${e.progress.total_tasks}`,
      printable(e.current_task ?? ""),
      e.execution_time !== undefined ? seconds(e.execution_time) : "",
      e.created ?? "",
      e.requested_by ? printable(`${e.requested_by.kind}:${e.requested_by.subject}`) : "",
    ]),
  );
}
