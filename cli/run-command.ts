import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { z } from "zod";
import { inputValue } from "../core/api-bodies.ts";
import { ApiFailure, type CrewApiClient } from "./api-client.ts";
import { withApiClient, withApiOptions, type ApiOptions } from "./api-command.ts";
import { CommandFailure } from "./command-failure.ts";
import { readExecutionEvents } from "./execution-events-reader.ts";
import { exitStatus, failedOrStopped } from "./exit-status.ts";
import { BodyPrinter } from "./output-format.ts";
import { RunProgress } from "./run-progress.ts";
import { Terminal } from "./terminal.ts";

interface RunOptions extends ApiOptions {
  input: string[];
  inputsFile?: string;
  watch?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];
const inputsObject = z.record(z.string(), inputValue);

/** `kubecrew run [CREW] -i name=value … [--watch]`: a kickoff, and with --watch the run followed to its end. */
export function registerRunCommand(program: Command): void {
  withApiOptions(
    program
      .command("run")
      .description(
        "Start a run of a crew; with --watch follow its tasks and steps to the end and exit with how it ended",
      )
      .argument("[crew]", "the crew to run (default: the API's default crew)")
      .option("-i, --input <name=value>", "an input of the crew (a string); repeat for several", collect, [])
      .option("--inputs-file <file>", "inputs from a JSON object (any JSON values); -i overrides its entries")
      .option("-w, --watch", "follow the run; exit 0 completed, 1 failed, 3 stopped, 130 on Ctrl-C (the run goes on)"),
  ).action(async (crew: string | undefined, options: RunOptions) => {
    await withApiClient("run", options, async (client) => {
      const inputs = { ...inputsFromFile(options.inputsFile), ...inputsFromFlags(options.input) };
      const kickoff = await client.kickoff(crew, { inputs }).catch((err: unknown) => {
        throw withInputHint(err);
      });
      const id = kickoff.kickoff_id;
      const hint = (command: string) => `kubecrew ${command} ${id}${crew !== undefined ? ` --crew ${crew}` : ""}`;
      if (options.output !== "text") {
        const printer = new BodyPrinter(options.output);
        printer.print(kickoff);
        return options.watch ? watchForScripts(client, crew, id, printer) : undefined;
      }
      if (!options.watch) {
        process.stdout.write(`${id}\n`);
        process.stderr.write(`Follow it: ${hint("logs")} --follow · its status: ${hint("status")}\n`);
        return;
      }
      return watch(client, crew, id, hint);
    });
  });
}

/** Follows the run in text; Ctrl-C ends the watching only, and says how to stop the run. */
async function watch(
  client: CrewApiClient,
  crew: string | undefined,
  id: string,
  hint: (command: string) => string,
): Promise<number> {
  const term = new Terminal();
  const status = await client.status(crew, id);
  term.line(`Run ${id} of ${crew ?? "the default crew"} started`);
  const progress = new RunProgress(term, status.status === "running" ? status.progress.total_tasks : undefined);
  const interrupted = new AbortController();
  const onInterrupt = () => interrupted.abort();
  process.on("SIGINT", onInterrupt); // a second listener: cli/main.ts then leaves the exit to this command
  try {
    for await (const event of readExecutionEvents(client, crew, id, { signal: interrupted.signal })) {
      progress.event(event);
      if (event.event === "execution_completed") return exitStatus.completed;
      if (event.event === "execution_failed") {
        const how = failedOrStopped(event.error);
        process.stderr.write(
          how === exitStatus.stopped ? `kubecrew run: the run was stopped\n` : `kubecrew run: ${event.error}\n`,
        );
        return how;
      }
    }
    if (!interrupted.signal.aborted) throw new CommandFailure(`the event stream of ${id} ended before the run did`);
    progress.end();
    process.stderr.write(
      `\nStopped watching; the run goes on. Watch it again: ${hint("logs")} --follow · stop it: ${hint("stop")}\n`,
    );
    return exitStatus.interrupted;
  } finally {
    progress.end();
    process.off("SIGINT", onInterrupt);
  }
}

/** --watch with -o json|yaml: the kickoff body, then, once the run has ended, its final status body. */
async function watchForScripts(
  client: CrewApiClient,
  crew: string | undefined,
  id: string,
  printer: BodyPrinter,
): Promise<number> {
  for await (const event of readExecutionEvents(client, crew, id)) {
    if (event.event !== "execution_completed" && event.event !== "execution_failed") continue;
    printer.print(await client.status(crew, id));
    return event.event === "execution_completed" ? exitStatus.completed : failedOrStopped(event.error);
  }
  throw new CommandFailure(`the event stream of ${id} ended before the run did`);
}

function inputsFromFlags(flags: string[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const flag of flags) {
    const at = flag.indexOf("=");
    if (at <= 0) throw new CommandFailure(`-i ${flag}: expected name=value, e.g. -i topic=tides`);
    inputs[flag.slice(0, at)] = flag.slice(at + 1);
  }
  return inputs;
}

function inputsFromFile(file: string | undefined): z.infer<typeof inputsObject> {
  if (file === undefined) return {};
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new CommandFailure(`--inputs-file ${file}: ${(err as Error).message}`);
  }
  const parsed = inputsObject.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? `${issue.path.join(".")}: ` : "";
    throw new CommandFailure(
      `--inputs-file ${file}: ${where}${issue.path.length ? issue.message : "must be a JSON object"}`,
    );
  }
  return parsed.data;
}

/** A 422 for missing inputs names the flags that would give them. */
function withInputHint(err: unknown): unknown {
  const missing = (err instanceof ApiFailure ? err.body?.details : undefined) as
    { missing_inputs?: unknown } | undefined;
  if (!(err instanceof ApiFailure) || !Array.isArray(missing?.missing_inputs)) return err;
  const flags = missing.missing_inputs.map((name) => `-i ${String(name)}=…`).join(" ");
  return new CommandFailure(`${err.message}: pass ${flags}`);
}
