import { generateText, stepCountIs, type LanguageModelUsage } from "ai";
import type { LlmConfig } from "../core/crew.ts";
import type { Logger } from "../core/logger.ts";
import type { TaskAssignment, TokenUsage } from "../core/task-assignment.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import type { AppsSettings } from "./apps-source.ts";
import type { Coworker, DelegatedRequest } from "./delegation-tools.ts";
import type { Env } from "./llm.ts";
import type { LlmTurnRecord } from "./step-recorder.ts";
import { MOCK_PROVIDER_ID, type LanguageModelV3 } from "./mock-model.ts";
import { buildTaskPrompt } from "./prompt.ts";
import { describeLlmError, type RetryPolicy } from "./retry.ts";
import { retryingModel } from "./retrying-model.ts";
import { openTaskToolset, type ToolCallRecord } from "./task-toolset.ts";
import { refusingHeldTools } from "./tool-approvals.ts";

export interface CoworkerDeps {
  env: Env;
  fetch: Fetch;
  languageModel: (llm: LlmConfig, env: Env, fetch: Fetch) => LanguageModelV3;
  policy: RetryPolicy;
  random?: () => number;
  logger: Logger;
  apps?: AppsSettings;
  now: () => number;
  onTurn: (turn: LlmTurnRecord) => void;
  onToolCall: (call: ToolCallRecord) => void;
  onTokens: (usage: TokenUsage) => void;
}

const EXPECTED = {
  work: "The work asked for, complete, in the form the request describes",
  question: "A clear, direct answer to the question",
};

/**
 * Runs a coworker on work or a question handed over by the task's agent, in this process: the coworker's own prompt
 * (its role, goal and background; the request as its task, the context given as what it builds on), its own model and
 * tools, at most its `maxIter` turns. Its turns and tool calls are steps of the task. A coworker delegates no further.
 * Returns its answer; throws when it has no model or gives no answer (the delegating agent is told why).
 */
export async function runCoworker(
  assignment: TaskAssignment,
  coworker: Coworker,
  request: DelegatedRequest,
  deps: CoworkerDeps,
  signal?: AbortSignal,
): Promise<string> {
  const agent = coworker.agent;
  const llm = agent.llm;
  if (!llm) throw new Error(`The coworker "${agent.role}" has no LLM configured`);
  const log = deps.logger.child({ coworker: agent.role });
  const prompt = buildTaskPrompt({
    agent,
    task: {
      index: assignment.task.index,
      name: assignment.task.name,
      description: request.text,
      expectedOutput: EXPECTED[request.kind],
    },
    context: request.context.trim() ? [{ task: "the coworker who asked", output: request.context }] : [],
  });
  const toolset = await openTaskToolset(
    { ...assignment, agent, tools: coworker.tools, coworkers: [] },
    {
      fetch: deps.fetch,
      env: deps.env,
      signal,
      logger: log,
      ...(deps.apps ? { apps: deps.apps } : {}),
      onToolCall: deps.onToolCall,
      now: deps.now,
    },
  );
  // A coworker's loop cannot park: a call that needs a person's approval is refused (tool-approvals.ts).
  const tools = refusingHeldTools(toolset.tools, coworker.tools.requireApproval ?? [], toolset.identify);
  try {
    const retrying = retryingModel(deps.languageModel(llm, deps.env, deps.fetch), {
      policy: deps.policy,
      random: deps.random,
      onRetry: ({ attempt, delayMs, error }) =>
        log.warn({ attempt, delayMs, error: describeLlmError(error, deps.policy) }, "Transient LLM error, retrying"),
      onTurn: deps.onTurn,
    });
    const result = await generateText({
      model: retrying.model,
      system: prompt.system,
      prompt: prompt.user,
      temperature: llm.temperature,
      maxOutputTokens: llm.maxOutputTokens,
      maxRetries: 0,
      abortSignal: signal,
      providerOptions: { [MOCK_PROVIDER_ID]: { task: `${assignment.task.name} (delegated to ${agent.name})` } },
      ...(toolset.names.length > 0 ? { tools, stopWhen: stepCountIs(agent.maxIter) } : {}),
    });
    deps.onTokens(usageOf(result.totalUsage));
    if (result.text.trim() === "") {
      throw new Error(`The coworker "${agent.role}" gave no answer (finish reason: ${result.finishReason})`);
    }
    log.info({ turns: result.steps.length }, "Delegated work done");
    return result.text;
  } finally {
    await toolset.close();
  }
}

function usageOf(usage: LanguageModelUsage): TokenUsage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
}
