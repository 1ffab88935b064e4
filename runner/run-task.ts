import { generateText, stepCountIs, type LanguageModelUsage, type ModelMessage } from "ai";
import type { LlmConfig } from "../core/crew.ts";
import type { Logger } from "../core/logger.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { silentLogger } from "../core/logger.ts";
import {
  MAX_TASK_OUTPUT_BYTES,
  type TaskAssignment,
  type TaskOutcome,
  type TokenUsage,
} from "../core/task-assignment.ts";
import { languageModelFor, modelLabel, type Env } from "./llm.ts";
import { MOCK_PROVIDER_ID, type LanguageModelV3 } from "./mock-model.ts";
import { buildTaskPrompt } from "./prompt.ts";
import { DEFAULT_RETRY_POLICY, describeLlmError, LlmCallError, type RetryPolicy } from "./retry.ts";
import { retryingModel } from "./retrying-model.ts";
import { openTaskToolset, type TaskToolset, type ToolCallRecord } from "./task-toolset.ts";
import { runCoworker } from "./coworker.ts";
import { delegationTools } from "./delegation-tools.ts";
import type { AppsSettings } from "./apps-source.ts";
import { StepRecorder, type StepSummary } from "./step-recorder.ts";
import type { TaskStep } from "../core/task-step.ts";
import type { JsonObject } from "../core/json.ts";
import { checkAnswer, checksExhausted, retryFeedback, taskChecks, type CheckDeps } from "./guardrails.ts";
import { judgeAnswer } from "./llm-guardrail.ts";
import { responseFormatName, structuredOutput } from "./structured-output.ts";
import { holdingTools, parkLoop, resumedMessages } from "./tool-approvals.ts";
import type { ParkedLoopRecord } from "../core/parked-loop.ts";

export interface RunTaskDeps {
  /** The environment API keys are read from (see llm.ts). */
  env: Env;
  /** The outbound client's fetch: LLM providers are called only where the outbound URL policy allows. */
  fetch: Fetch;
  retry?: RetryPolicy;
  /** Which attempt of the task this is (the Job's retry count + 1); reported in the outcome. */
  attempt?: number;
  /** Aborts the LLM call (SIGTERM); the outcome then carries the abort reason as its error. */
  signal?: AbortSignal;
  logger?: Logger;
  /** Monotonic milliseconds, for execution time. */
  now?: () => number;
  random?: () => number;
  /** Builds the model for an LlmConfig; the real providers by default. */
  languageModel?: (llm: LlmConfig, env: Env, fetch: Fetch) => LanguageModelV3;
  /** The connected apps' MCP endpoint and credential file (agents with `apps`). */
  apps?: AppsSettings;
  /** Told about every tool call as it ends. */
  onToolCall?: (call: ToolCallRecord) => void;
  /** Told about every step (LLM turn or tool call) as it ends, with the task's steps so far. */
  onStep?: (step: TaskStep, sofar: StepSummary) => void;
}

const EMPTY_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

function usageOf(usage: LanguageModelUsage): TokenUsage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
}

function addTokens(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

function formatMiB(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * Carries out one task with its agent: opens the task's tool sources (one MCP session per server, always closed),
 * runs the AI SDK's tool loop for at most the agent's `maxIter` LLM turns (each turn's transient errors retried on
 * their own), and measures the time and tokens spent. A tool's failure goes back to the model as the tool's result.
 * Each answer then goes through the task's checks (its outputJson and guardrails, runner/guardrails.ts, each a step);
 * one that fails goes back to the agent with the reason, up to guardrailMaxRetries times. The task fails when a tool
 * source cannot be used, the LLM fails, the loop ends without an answer, or the last answer still fails a check. A
 * failing task never throws: the outcome carries the error instead.
 */
export async function runTask(assignment: TaskAssignment, deps: RunTaskDeps): Promise<TaskOutcome> {
  const now = deps.now ?? (() => performance.now());
  const log = (deps.logger ?? silentLogger()).child({ execution: assignment.execution.id, task: assignment.task.name });
  const started = now();
  const base = {
    taskName: assignment.task.name,
    taskIndex: assignment.task.index,
    agent: assignment.agent.role,
    attempt: deps.attempt ?? 1,
  };
  const seconds = () => Math.round(now() - started) / 1000;
  const llm = assignment.agent.llm;
  if (!llm) {
    const error = `Agent "${assignment.agent.name}" has no LLM configured (set the crew's llm or the agent's llm)`;
    return { ...base, error, executionTime: seconds(), tokenUsage: EMPTY_USAGE };
  }
  let model = modelLabel(llm);
  let tokenUsage = EMPTY_USAGE;
  let toolset: TaskToolset | undefined;
  const recorder = new StepRecorder(deps.onStep);
  const ended = (fields: {
    output?: string;
    jsonDict?: JsonObject;
    error?: string;
    parked?: ParkedLoopRecord;
    executionTime: number;
  }): TaskOutcome => ({
    ...base,
    ...fields,
    tokenUsage,
    model,
    ...recorder.summary(),
  });
  try {
    const languageModel = (deps.languageModel ?? languageModelFor)(llm, deps.env, deps.fetch);
    const prompt = buildTaskPrompt(assignment);
    log.info({ model, agent: assignment.agent.role }, "Task started");
    try {
      toolset = await openTaskToolset(assignment, {
        fetch: deps.fetch,
        env: deps.env,
        signal: deps.signal,
        logger: log,
        ...(deps.apps ? { apps: deps.apps } : {}),
        onToolCall: (call) => {
          recorder.toolCall(call);
          deps.onToolCall?.(call);
        },
        now,
      });
    } catch (err) {
      const error = oneLine(err instanceof Error ? err.message : String(err));
      log.warn({ model, error }, "Task failed: its tools cannot be used");
      return ended({ error, executionTime: seconds() });
    }
    const policy = deps.retry ?? DEFAULT_RETRY_POLICY;
    const addTokensUsed = (usage: TokenUsage) => (tokenUsage = addTokens(tokenUsage, usage));
    const opened = toolset;
    const offered = {
      ...opened.tools,
      ...delegationTools(assignment.coworkers ?? [], {
        runCoworker: (coworker, request, signal) =>
          runCoworker(
            assignment,
            coworker,
            request,
            {
              env: deps.env,
              fetch: deps.fetch,
              languageModel: deps.languageModel ?? languageModelFor,
              policy,
              random: deps.random,
              logger: log,
              ...(deps.apps ? { apps: deps.apps } : {}),
              now,
              onTurn: (turn) => recorder.llmTurn(turn),
              onToolCall: (call) => {
                recorder.toolCall(call);
                deps.onToolCall?.(call);
              },
              onTokens: addTokensUsed,
            },
            signal,
          ),
        onDelegation: (record) => recorder.delegation(record),
        signal: deps.signal,
        now,
      }),
    };
    // Calls the crew's toolPolicy.requireApproval names end the loop before they are made (tool-approvals.ts).
    const tools = holdingTools(offered, assignment.tools.requireApproval ?? [], opened.identify);
    const retrying = retryingModel(languageModel, {
      policy,
      random: deps.random,
      onRetry: ({ attempt, delayMs, error }) =>
        log.warn({ model, attempt, delayMs, error: describeLlmError(error, policy) }, "Transient LLM error, retrying"),
      onTurn: (turn) => recorder.llmTurn(turn),
    });
    const maxIter = assignment.agent.maxIter;
    const checks = taskChecks(assignment.task);
    const output = checks.outputJson
      ? structuredOutput(checks.outputJson, responseFormatName(assignment.task.name))
      : undefined;
    const addUsage = addTokensUsed;
    const checkDeps: CheckDeps = {
      judge: (rule, answer) =>
        judgeAnswer(rule, answer, { model: retrying.model, llm, signal: deps.signal, task: assignment.task.name }),
      onTokens: addUsage,
      onCheck: (check, result, startedAt, durationMs) =>
        recorder.guardrailCheck({
          check: check.name,
          ...(result.passed ? {} : { reason: result.reason }),
          startedAt,
          durationMs,
        }),
      now,
    };
    // The conversation goes on across retries: the agent sees its earlier answer and why it failed a check.
    // A run after held calls were decided goes on with the parked conversation and people's answers.
    const resume = assignment.task.resume;
    const resumed = resume && resumedMessages(resume);
    if (resume && !resumed) {
      return ended({ error: "The task's held tool calls were not all decided", executionTime: seconds() });
    }
    const messages: ModelMessage[] = resumed ?? [{ role: "user", content: prompt.user }];
    for (let retry = 0; ; retry++) {
      const result = await generateText({
        model: retrying.model,
        system: prompt.system,
        messages,
        temperature: llm.temperature,
        maxOutputTokens: llm.maxOutputTokens,
        maxRetries: 0,
        abortSignal: deps.signal,
        providerOptions: {
          [MOCK_PROVIDER_ID]: { task: assignment.task.name },
          // OpenAI's strict mode refuses most schemas written without it in mind; the answer is validated here anyway.
          ...(output ? { openai: { strictJsonSchema: false } } : {}),
        },
        ...(output ? { output } : {}),
        ...(Object.keys(tools).length > 0 ? { tools, stopWhen: stepCountIs(maxIter) } : {}),
      });
      model = `${llm.provider}/${result.response.modelId || llm.model}`;
      if (result.warnings?.length) log.warn({ model, warnings: result.warnings }, "LLM call warnings");
      addUsage(usageOf(result.totalUsage));
      const lastTool = opened.lastTool();
      const turns = result.steps.length;
      const parked = parkLoop([...messages, ...result.response.messages], result.content, opened.identify);
      if (parked) {
        const executionTime = seconds();
        const bytes = Buffer.byteLength(JSON.stringify(parked), "utf8");
        if (bytes > MAX_TASK_OUTPUT_BYTES) {
          const error = `The conversation to keep while tool calls wait for approval is ${bytes} bytes, above the ${formatMiB(MAX_TASK_OUTPUT_BYTES)} limit`;
          return ended({ error, executionTime });
        }
        const held = parked.held.map((call) => call.tool);
        log.info({ model, held, turns, executionTime }, "Task parked: tool calls wait for approval");
        return ended({ parked, executionTime });
      }
      if (result.finishReason === "tool-calls" && turns >= maxIter) {
        const error =
          `The agent reached maxIter (${maxIter} LLM turns) without a final answer` +
          (lastTool ? `; the last tool it called was "${lastTool}"` : "");
        log.warn({ model, turns, lastTool, executionTime: seconds() }, "Task failed: maxIter reached");
        return ended({ error, executionTime: seconds() });
      }
      if (result.text.trim() === "") {
        const error =
          `The LLM returned an empty answer (finish reason: ${result.finishReason})` +
          (lastTool ? `; the last tool it called was "${lastTool}"` : "");
        log.warn({ model, executionTime: seconds() }, "Task failed: empty answer");
        return ended({ error, executionTime: seconds() });
      }
      const verdict = await checkAnswer(result.text, checks, checkDeps);
      if (!verdict.passed) {
        if (retry >= checks.maxRetries) {
          const error = checksExhausted(verdict.failed, verdict.reason, checks.maxRetries);
          log.warn(
            { model, check: verdict.failed.field, executionTime: seconds() },
            "Task failed: answer failed a check",
          );
          return ended({ error, executionTime: seconds() });
        }
        log.info({ model, check: verdict.failed.field, retry: retry + 1 }, "Answer failed a check; asking again");
        messages.push(...result.response.messages, {
          role: "user",
          content: retryFeedback(verdict.failed, verdict.reason),
        });
        continue;
      }
      const executionTime = seconds();
      const bytes =
        Buffer.byteLength(verdict.output, "utf8") +
        (verdict.jsonDict ? Buffer.byteLength(JSON.stringify(verdict.jsonDict), "utf8") : 0);
      if (bytes > MAX_TASK_OUTPUT_BYTES) {
        const error =
          `Task output is ${bytes} bytes${verdict.jsonDict ? " (its text and its object)" : ""}, ` +
          `above the ${formatMiB(MAX_TASK_OUTPUT_BYTES)} limit`;
        log.warn({ model, bytes, executionTime }, "Task failed: output too large");
        return ended({ error, executionTime });
      }
      log.info({ model, attempts: retrying.attempts(), turns, executionTime, tokenUsage, bytes }, "Task succeeded");
      return ended({
        output: verdict.output,
        ...(verdict.jsonDict ? { jsonDict: verdict.jsonDict } : {}),
        executionTime,
      });
    }
  } catch (err) {
    const executionTime = seconds();
    const cause = err instanceof LlmCallError ? err.message : err instanceof Error ? err.message : String(err);
    const error = oneLine(`LLM call to ${model} failed: ${cause}`);
    log.warn({ model, executionTime, error }, "Task failed");
    return ended({ error, executionTime });
  } finally {
    await toolset?.close();
  }
}
