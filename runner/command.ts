import type { Command } from "commander";
import { trace } from "@opentelemetry/api";
import { configOrExit } from "../core/config.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import type { TaskOutcome } from "../core/task-assignment.ts";
import { runnerConfigFromEnv, type RunnerConfig } from "./config.ts";
import { FileTaskIO, type TaskIO } from "./io.ts";
import { KubernetesTaskIO } from "./kubernetes-io.ts";
import { runCrewaiTask } from "./crewai-runtime.ts";
import { runTask } from "./run-task.ts";
import { runToolCall } from "./run-tool-call.ts";
import type { StepSummary, StepTask } from "./step-recorder.ts";
import { StepReporter } from "./step-reporter.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { startTracing, type TelemetryEnv } from "../platform/telemetry/tracing.ts";
import { runJobName } from "../kube/task-names.ts";
import { TRACEPARENT_ENV, traceIdOf, traceparentOf } from "../platform/telemetry/trace-context.ts";
import { languageModelFor } from "./llm.ts";
import { tracedLanguageModel } from "./llm-tracing.ts";
import { inTaskSpan } from "./task-span.ts";

/**
 * The environment tracing starts from, with the task pod's identity added to OTEL_RESOURCE_ATTRIBUTES (OpenTelemetry's
 * k8s.pod.name and k8s.namespace.name, from the Downward API): every span the pod exports says which pod it was.
 */
export function withPodResource(env: TelemetryEnv, pod: RunnerConfig["kubernetes"]): TelemetryEnv {
  const attributes = [
    ...(pod.podName ? [`k8s.pod.name=${encodeURIComponent(pod.podName)}`] : []),
    ...(pod.namespace ? [`k8s.namespace.name=${encodeURIComponent(pod.namespace)}`] : []),
  ];
  if (attributes.length === 0) return env;
  const given = env.OTEL_RESOURCE_ATTRIBUTES?.trim();
  return { ...env, OTEL_RESOURCE_ATTRIBUTES: [...(given ? [given] : []), ...attributes].join(",") };
}

export interface RunnerResult {
  /** 0 when the task succeeded, 1 otherwise. */
  exitCode: number;
  /** The one-line reason the task (or the runner) failed. */
  error?: string;
  outcome?: TaskOutcome;
}

/**
 * One runner's whole life: read the assignment, run the task, report the outcome. A task failure is reported like a
 * success (an outcome with `error`); only when the assignment cannot be read or the outcome cannot be written is
 * there no outcome.
 */
export async function runAssignedTask(
  io: TaskIO,
  options: { config: RunnerConfig; logger: Logger; signal?: AbortSignal },
): Promise<RunnerResult> {
  const { config } = options;
  // Every log line of the task names its trace, so a line leads to the trace and back.
  const traceId = traceIdOf(config.env[TRACEPARENT_ENV]);
  const logger = traceId ? options.logger.child({ trace_id: traceId }) : options.logger;
  let outcome: TaskOutcome;
  const outbound = createOutboundClient(config.outbound);
  try {
    const assignment = await io.readAssignment();
    // One reporter per task whose steps come: a whole project's run reports each of its tasks' steps as they come.
    const reporters = new Map<number, StepReporter>();
    const reporterFor = (task?: StepTask) => {
      const index = task?.index ?? assignment.task.index;
      if (!reporters.has(index)) {
        reporters.set(index, new StepReporter((sofar) => io.reportSteps!(sofar, config.attempt, task), logger));
      }
      return reporters.get(index)!;
    };
    const onStep = io.reportSteps
      ? { onStep: (_step: unknown, sofar: StepSummary, task?: StepTask) => reporterFor(task).push(sofar) }
      : {};
    const apps = config.apps ? { apps: config.apps } : {};
    outcome = await inTaskSpan(assignment, config.env[TRACEPARENT_ENV], async () => {
      // In a task pod, the task's span names its Job (the controller's start_task span does too).
      if (config.kubernetes.podName) {
        trace.getActiveSpan()?.setAttribute("k8s.job.name", runJobName(assignment.execution.id, assignment));
      }
      return assignment.runtime === "crewai"
        ? await runCrewaiTask(assignment, {
            python: config.crewaiPython,
            // The Python side continues the trace under the task's span (W3C traceparent, as OpenTelemetry's SDKs read it).
            // Its spans name the pod as the runner's do.
            env: {
              ...withPodResource(config.env, config.kubernetes),
              [TRACEPARENT_ENV]: traceparentOf() ?? config.env[TRACEPARENT_ENV],
            },
            policy: config.outbound,
            attempt: config.attempt,
            ...apps,
            ...(options.signal ? { signal: options.signal } : {}),
            logger,
            ...onStep,
            ...(io.reportTaskOutcome ? { onTaskOutcome: (o: TaskOutcome) => io.reportTaskOutcome!(o) } : {}),
          })
        : await (assignment.task.toolCall ? runToolCall : runTask)(assignment, {
            env: config.env,
            fetch: outbound.fetch,
            languageModel: (llm, env, fetch) =>
              tracedLanguageModel(languageModelFor(llm, env, fetch), llm, { content: config.traceContent }),
            retry: config.retry,
            attempt: config.attempt,
            ...apps,
            signal: options.signal,
            logger,
            ...onStep,
          });
    });
    await Promise.all([...reporters.values()].map((r) => r.flushed()));
  } catch (error) {
    const message = (error as Error).message;
    // The log line's message is the plain error line too: a container runtime may order stderr before stdout, and the
    // end of the log the controller reads (2 KiB) may then hold only this line.
    logger.error({ err: error }, message);
    return { exitCode: 1, error: message };
  } finally {
    await outbound.close();
  }
  try {
    await io.reportOutcome(outcome);
  } catch (error) {
    const message = `Cannot report the outcome: ${(error as Error).message}`;
    logger.error({ err: error }, message);
    return { exitCode: 1, error: message, outcome };
  }
  return outcome.error === undefined ? { exitCode: 0, outcome } : { exitCode: 1, error: outcome.error, outcome };
}

interface RunnerOptions {
  assignment: string;
  outcome?: string;
  steps?: string;
  outcomes?: string;
  kubernetes?: boolean;
}

/**
 * `kubecrew runner --assignment <file> --outcome <file> [--steps <file>]`: runs one task (what the embedded mode
 * spawns); the steps file holds the steps so far while the task runs.
 * `kubecrew runner --kubernetes --assignment <file>`: in a Job pod, the outcome becomes a CrewTaskResult.
 */
export function registerRunnerCommand(program: Command): void {
  program
    .command("runner")
    .description("Run one task of a crew execution and report its outcome (exit 0: task succeeded, 1: it failed)")
    .requiredOption("--assignment <path>", "JSON file with the task assignment")
    .option("--outcome <path>", "file the outcome is written to (JSON, replaced atomically)")
    .option("--steps <path>", "file the steps so far are written to while the task runs (JSON, replaced atomically)")
    .option("--outcomes <path>", "file a whole project's run writes its tasks' outcomes to as they end (JSON array)")
    .option("--kubernetes", "report the outcome as a CrewTaskResult through the Kubernetes API (in a Job pod)")
    .action(async (options: RunnerOptions) => {
      if (!options.kubernetes && !options.outcome) {
        process.stderr.write("runner: give --outcome <path>, or --kubernetes in a Job pod\n");
        process.exitCode = 1;
        return;
      }
      const config = configOrExit("runner", () => runnerConfigFromEnv(process.env));
      const tracing = configOrExit("runner", () =>
        startTracing({ env: withPodResource(process.env, config.kubernetes), serviceName: "kubecrew-runner" }),
      );
      const logger = createLogger({ level: config.logLevel, name: "runner" });
      // The AI SDK prints warnings with console.*; runTask logs them as JSON instead, and stderr stays one line.
      globalThis.AI_SDK_LOG_WARNINGS = false;
      const stop = new AbortController();
      const onSignal = (signal: NodeJS.Signals) => stop.abort(new Error(`Task interrupted by ${signal}`));
      process.once("SIGTERM", onSignal);
      process.once("SIGINT", onSignal);
      try {
        const io: TaskIO = options.kubernetes
          ? new KubernetesTaskIO({ assignmentPath: options.assignment, config: config.kubernetes })
          : new FileTaskIO({
              assignment: options.assignment,
              outcome: options.outcome!,
              ...(options.steps ? { steps: options.steps } : {}),
              ...(options.outcomes ? { outcomes: options.outcomes } : {}),
            });
        const result = await runAssignedTask(io, { config, logger, signal: stop.signal });
        if (result.error !== undefined) process.stderr.write(`${result.error.replace(/\s*\n\s*/g, " ")}\n`);
        process.exitCode = result.exitCode;
      } finally {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        await tracing.stop();
      }
    });
}
