import { generateText, type LanguageModel } from "ai";
import type { LlmConfig } from "../core/crew.ts";
import type { JsonObject } from "../core/json.ts";
import { compileJsonSchema } from "../core/json-schema.ts";
import type { TokenUsage } from "../core/task-assignment.ts";
import { MOCK_PROVIDER_ID, type MockProviderOptions } from "./mock-model.ts";
import { readStructuredAnswer, structuredOutput } from "./structured-output.ts";

/**
 * An LLM guardrail (a task's `guardrail`, or `{llm: rule}` in its `guardrails`), as CrewAI has one: the agent's model,
 * in a call of its own, judges whether the answer complies with the rule and, when it does not, says why. The verdict
 * is structured output (`valid`, `feedback`); the reason goes back to the agent as feedback (runner/guardrails.ts).
 */

/** The verdict's schema; closed and fully required, so OpenAI's strict structured output accepts it as it is. */
export const VERDICT_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    valid: { type: "boolean", description: "true when the answer complies with the rule" },
    feedback: { type: "string", description: "what in the answer breaks the rule; empty when it complies" },
  },
  required: ["valid", "feedback"],
  additionalProperties: false,
};
export const VERDICT_NAME = "guardrail_verdict";

const JUDGE_SYSTEM =
  "You review the answer an AI agent gave to a task and decide whether it complies with one rule. You judge; you " +
  "do not rewrite or improve the answer, and you do not suggest corrections.";

function judgePrompt(rule: string, answer: string): string {
  return (
    `Rule:\n${rule}\n\nAnswer to review:\n${answer}\n\n` +
    'Reply with a JSON object: "valid" is true when the answer complies with the rule and false when it does not; ' +
    '"feedback" says exactly what breaks the rule, and by how much where that can be measured (an empty string ' +
    "when the answer complies)."
  );
}

export interface LlmGuardrailDeps {
  model: LanguageModel;
  llm: LlmConfig;
  signal?: AbortSignal;
  /** The task, named to the mock provider. */
  task: string;
}

export interface LlmVerdict {
  passed: boolean;
  /** Why the answer fails the rule (when it does). */
  reason?: string;
  tokenUsage: TokenUsage;
}

/**
 * The model's verdict on `answer` under `rule`. A verdict that cannot be read counts as a failed check (the agent
 * tries again), as in CrewAI; a call that fails (after the retries of transient errors) throws.
 */
export async function judgeAnswer(rule: string, answer: string, deps: LlmGuardrailDeps): Promise<LlmVerdict> {
  const mock: MockProviderOptions = { task: deps.task, guardrail: true };
  const result = await generateText({
    model: deps.model,
    system: JUDGE_SYSTEM,
    prompt: judgePrompt(rule, answer),
    output: structuredOutput(VERDICT_SCHEMA, VERDICT_NAME),
    temperature: deps.llm.temperature,
    maxOutputTokens: deps.llm.maxOutputTokens,
    maxRetries: 0,
    abortSignal: deps.signal,
    providerOptions: { [MOCK_PROVIDER_ID]: { ...mock } },
  });
  const usage = result.totalUsage;
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  const tokenUsage = { inputTokens, outputTokens, totalTokens: usage.totalTokens ?? inputTokens + outputTokens };
  const verdict = readStructuredAnswer(result.text, compileJsonSchema(VERDICT_SCHEMA));
  if (verdict.errors) {
    return { passed: false, reason: `the rule could not be checked: ${verdict.errors.join("; ")}`, tokenUsage };
  }
  if (verdict.object.valid === true) return { passed: true, tokenUsage };
  const feedback = typeof verdict.object.feedback === "string" ? verdict.object.feedback.trim() : "";
  return { passed: false, reason: feedback || "the answer does not comply with the rule", tokenUsage };
}
