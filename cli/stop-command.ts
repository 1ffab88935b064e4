import type { Command } from "commander";
import { withApiClient, withApiOptions, type ApiOptions } from "./api-command.ts";
import { locateExecution } from "./execution-locator.ts";
import { BodyPrinter } from "./output-format.ts";

interface StopOptions extends ApiOptions {
  crew?: string;
}

/** `kubecrew stop ID`: asks the API to stop a run (POST /crews/{crew}/stop/{id}). */
export function registerStopCommand(program: Command): void {
  withApiOptions(
    program
      .command("stop")
      .description("Stop a run: its running task is ended and no other starts")
      .argument("<id>", "the run's kickoff ID")
      .option("--crew <crew>", "the run's crew (default: looked up among the crews the token may use)"),
  ).action(async (id: string, options: StopOptions) => {
    await withApiClient("stop", options, async (client) => {
      const crew = options.crew ?? (await locateExecution(client, id)).crew;
      const stopping = await client.stop(crew, id);
      if (options.output !== "text") new BodyPrinter(options.output).print(stopping);
      else process.stdout.write(`Stopping ${id} (crew ${crew})\n`);
    });
  });
}
