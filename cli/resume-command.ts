import type { Command } from "commander";
import { withApiClient, withApiOptions, type ApiOptions } from "./api-command.ts";
import { CommandFailure } from "./command-failure.ts";
import { locateExecution } from "./execution-locator.ts";
import { BodyPrinter } from "./output-format.ts";

interface ResumeOptions extends ApiOptions {
  crew?: string;
  task?: string;
  approve?: boolean;
  feedback?: string;
}

/**
 * `kubecrew resume ID (--approve | --feedback "…")`: a person's answer to a run that waits for one (POST /resume) —
 * approve the task's answer (with --feedback, a note the later tasks get with it), or send it back with the feedback
 * for the task to run again. The task is the one that waits unless --task names it.
 */
export function registerResumeCommand(program: Command): void {
  withApiOptions(
    program
      .command("resume")
      .description("Answer a run that waits for a person: approve its task's answer, or send it back with feedback")
      .argument("<id>", "the run's kickoff ID")
      .option("--task <task>", "the task whose answer waits (default: the one the run waits for)")
      .option("--approve", "accept the answer; the run goes on (with --feedback: a note for the later tasks)")
      .option("--feedback <text>", "without --approve: what to change; the task runs again with it")
      .option("--crew <crew>", "the run's crew (default: looked up among the crews the token may use)"),
  ).action(async (id: string, options: ResumeOptions) => {
    await withApiClient("resume", options, async (client) => {
      if (!options.approve && options.feedback === undefined) {
        throw new CommandFailure('give --approve to accept the answer, or --feedback "…" to send it back');
      }
      const located = options.crew && options.task ? undefined : await locateExecution(client, id, options.crew);
      const crew = options.crew ?? located!.crew;
      const waiting = located?.status.status === "running" ? located.status.pending_human_input : undefined;
      const task = options.task ?? waiting?.task_id;
      if (!task) throw new CommandFailure(`run ${id} waits for no one (kubecrew status ${id} shows where it is)`);
      const answer = await client.resume(crew, {
        execution_id: id,
        task_id: task,
        human_feedback: options.feedback ?? "",
        is_approve: options.approve === true,
      });
      if (options.output !== "text") new BodyPrinter(options.output).print(answer);
      else process.stdout.write(`${answer.message} (${answer.status})\n`);
    });
  });
}
