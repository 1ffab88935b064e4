import type { LlmConfig } from "../core/crew.ts";
import type { Logger } from "../core/logger.ts";
import { loadFlows } from "./flow-catalog.ts";
import { FlowRuns } from "./flow-runs.ts";
import { LocalExecutions, type LocalExecutionsOptions } from "./local-executions.ts";

/** Items of one `each` running at once in `kubecrew dev`. */
const EACH_CONCURRENCY = 4;

/**
 * The flows of the crews folder, run in this process: their crew and agent methods as executions of their own (apart
 * from the crews the API serves, so they are neither listed nor kicked off as crews), run as any crew's tasks.
 */
export async function embeddedFlows(
  dir: string,
  llm: LlmConfig,
  executionOptions: Omit<LocalExecutionsOptions, "crews">,
  log: Logger,
  /** On the mock provider, a human_feedback nobody answers in this time takes its first outcome (0: never). */
  mockFeedbackAfterMs = 0,
): Promise<{ flows: FlowRuns; names: string[]; executions: LocalExecutions; close(): Promise<void> } | undefined> {
  const { flows, crews } = await loadFlows(dir, llm);
  if (!flows.length) return undefined;
  const executions = new LocalExecutions({ ...executionOptions, crews });
  const runs = new FlowRuns({
    flows,
    executions,
    crews,
    log,
    eachConcurrency: EACH_CONCURRENCY,
    onMock: llm.provider === "mock",
    mockFeedbackAfterMs,
    webhookFetch: executionOptions.webhookFetch,
  });
  return { flows: runs, names: flows.map((f) => f.name), executions, close: () => executions.close() };
}
