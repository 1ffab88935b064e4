import { z } from "zod";
import type { JsonObject } from "./json.ts";

/**
 * Steps as data: each LLM turn and each tool call of a task is a step. Runners report them with the task's outcome;
 * they are stored on the task's result (the CrewTaskResult in a cluster, memory under `kubecrew dev`) within bounds,
 * so a chatty agent cannot grow a result without limit.
 */

/**
 * The most steps kept on one result: the first ones (`stepCount` still counts every step). The first, not the latest:
 * a result's steps then only grow while its attempt runs, so the event stream's ids (positions) never shift. Each kept
 * step keeps its metadata (index, kind, tool, times, token usage); only the older ones' texts are summarised.
 */
export const MAX_STORED_STEPS = 500;
/** Only the latest this many kept steps keep their input, output and error; older ones' texts are summarised. */
export const MAX_STEPS_WITH_TEXT = 100;
/** A step's input and output are stored cut to this many characters. */
export const MAX_STEP_TEXT_CHARS = 2_000;
/** The stored steps' inputs and outputs together stay under this many characters; the oldest are summarised first. */
export const MAX_STEPS_TEXT_CHARS = 64 * 1024;
/** What an older step's input, output or error is summarised to (at most): its start and its original size. */
export const SUMMARY_CHARS = 120;

export const stepTokenUsage = z.object({
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0),
});

/**
 * What a step is: an LLM turn, a tool call, a check of the task's answer (its structured output, a guardrail), or a
 * delegation (work handed to, or a question asked of, a coworker agent, which ran in the same pod).
 */
export const STEP_KINDS = ["llm", "tool", "guardrail", "delegation"] as const;

export const taskStep = z.object({
  index: z.number().int().min(0).describe("0, 1, 2, … in the order the steps ended"),
  kind: z
    .enum(STEP_KINDS)
    .describe(
      "llm: an LLM turn; tool: a tool call; guardrail: a check of the task's answer; delegation: work handed to a coworker",
    ),
  tool: z.string().optional().describe("The tool called (tool and delegation steps)"),
  coworker: z.string().max(1000).optional().describe("The coworker's role (delegation steps)"),
  input: z
    .string()
    .optional()
    .describe(
      "The tool call's input as JSON, the check a guardrail step made, or the work or question a delegation handed over (cut)",
    ),
  output: z
    .string()
    .optional()
    .describe(
      "What the tool returned, the LLM's text or the tools it called, `passed` for a check, or the coworker's answer (cut)",
    ),
  error: z.string().optional().describe("Why the step failed; for a guardrail step, why the answer failed the check"),
  startedAt: z.string().describe("RFC 3339 time the step started"),
  durationMs: z.number().int().min(0),
  tokenUsage: stepTokenUsage.optional().describe("LLM steps"),
});
export type TaskStep = z.infer<typeof taskStep>;

/** A step as webhooks and the event stream send it: snake_case, absent fields left out. */
export function stepWireForm(step: TaskStep): JsonObject {
  return {
    index: step.index,
    kind: step.kind,
    ...(step.tool !== undefined ? { tool: step.tool } : {}),
    ...(step.coworker !== undefined ? { coworker: step.coworker } : {}),
    ...(step.input !== undefined ? { input: step.input } : {}),
    ...(step.output !== undefined ? { output: step.output } : {}),
    ...(step.error !== undefined ? { error: step.error } : {}),
    started_at: step.startedAt,
    duration_ms: step.durationMs,
    ...(step.tokenUsage
      ? {
          token_usage: {
            input_tokens: step.tokenUsage.inputTokens,
            output_tokens: step.tokenUsage.outputTokens,
            total_tokens: step.tokenUsage.totalTokens,
          },
        }
      : {}),
  };
}

/** `text` within `max` characters; a cut text ends with a marker naming how many characters were left out. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = ` … [${text.length - max} more characters]`;
  return text.slice(0, Math.max(0, max - marker.length)) + marker;
}

const cutMarker = / … \[(\d+) more characters\]$/;
const summaryMarker = / … \[summarised: (\d+) characters\]$/;

/** How long `text` was before cutText or summarise shortened it (its length when it was not). */
export function originalLength(text: string): number {
  const summarised = summaryMarker.exec(text);
  if (summarised) return Number(summarised[1]);
  const cut = cutMarker.exec(text);
  return cut ? text.length + Number(cut[1]) : text.length; // cutText leaves `max` characters, the marker names the rest
}

/** `text` shortened to its start and a marker with its original size, within SUMMARY_CHARS; short text as it is. */
export function summarise(text: string): string {
  if (text.length <= SUMMARY_CHARS || summaryMarker.test(text)) return text;
  const marker = ` … [summarised: ${originalLength(text)} characters]`;
  return text.slice(0, SUMMARY_CHARS - marker.length) + marker;
}

const textSize = (s: TaskStep) => (s.input?.length ?? 0) + (s.output?.length ?? 0) + (s.error?.length ?? 0);

function summariseStep(step: TaskStep): void {
  if (step.input !== undefined) step.input = summarise(step.input);
  if (step.output !== undefined) step.output = summarise(step.output);
  if (step.error !== undefined) step.error = summarise(step.error);
}

/**
 * The steps to store: at most MAX_STORED_STEPS (the first), each with its metadata and its texts cut to
 * MAX_STEP_TEXT_CHARS; the texts of all but the latest MAX_STEPS_WITH_TEXT summarised, and, while the texts together
 * are over MAX_STEPS_TEXT_CHARS, the oldest remaining ones summarised too. Positions never change: a step's place in
 * the list is its index, only its texts shrink as later steps come.
 */
export function boundSteps(steps: readonly TaskStep[]): TaskStep[] {
  const kept = steps.slice(0, MAX_STORED_STEPS).map((s) => ({
    ...s,
    ...(s.input !== undefined ? { input: cutText(s.input, MAX_STEP_TEXT_CHARS) } : {}),
    ...(s.output !== undefined ? { output: cutText(s.output, MAX_STEP_TEXT_CHARS) } : {}),
    ...(s.error !== undefined ? { error: cutText(s.error, MAX_STEP_TEXT_CHARS) } : {}),
  }));
  const withText = Math.max(0, kept.length - MAX_STEPS_WITH_TEXT);
  for (let i = 0; i < withText; i++) summariseStep(kept[i]!);
  let total = kept.reduce((sum, s) => sum + textSize(s), 0);
  for (let i = withText; i < kept.length && total > MAX_STEPS_TEXT_CHARS; i++) {
    const step = kept[i]!;
    const before = textSize(step);
    summariseStep(step);
    total -= before - textSize(step);
  }
  return kept;
}
