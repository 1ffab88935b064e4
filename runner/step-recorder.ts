import { boundSteps, cutText, MAX_STEP_TEXT_CHARS, MAX_STORED_STEPS, type TaskStep } from "../core/task-step.ts";
import type { DelegationRecord } from "./delegation-tools.ts";
import type { ToolCallRecord } from "./task-toolset.ts";

/** One LLM turn as the model wrapper saw it. */
export interface LlmTurnRecord {
  startedAt: Date;
  durationMs: number;
  /** The turn's text, or the tools it called. */
  output?: string;
  error?: string;
  tokenUsage?: { inputTokens: number; outputTokens: number; totalTokens: number };
}

/** One check of a task's answer as runner/guardrails.ts made it. */
export interface GuardrailCheckRecord {
  /** The check in a few words (`outputJson`, `maxLength 280`, `llm: <rule>`). */
  check: string;
  /** Why the answer failed it; undefined when it passed. */
  reason?: string;
  startedAt: Date;
  durationMs: number;
}

/**
 * Numbers a task's steps in the order they end (an LLM turn ends before the tools it called run), keeps them for the
 * outcome within core's bounds, and hands each one to `onStep` as it ends.
 */
/** A task's steps so far, as outcomes and results carry them. */
export interface StepSummary {
  steps: TaskStep[];
  stepCount: number;
  toolsUsed: string[];
}

/** In a whole project's run (one run for every task), the task a step belongs to. */
export interface StepTask {
  name: string;
  index: number;
  /** Its agent's role, as CrewAI reports it ("" when it names none). */
  agent: string;
}

export class StepRecorder {
  private readonly steps: TaskStep[] = [];
  private readonly tools: string[] = [];
  private count = 0;
  private readonly onStep: ((step: TaskStep, sofar: StepSummary) => void) | undefined;

  constructor(onStep?: (step: TaskStep, sofar: StepSummary) => void) {
    this.onStep = onStep;
  }

  llmTurn(turn: LlmTurnRecord): void {
    this.record({
      kind: "llm",
      ...(turn.output !== undefined ? { output: turn.output } : {}),
      ...(turn.error !== undefined ? { error: turn.error } : {}),
      startedAt: turn.startedAt.toISOString(),
      durationMs: turn.durationMs,
      ...(turn.tokenUsage ? { tokenUsage: turn.tokenUsage } : {}),
    });
  }

  toolCall(call: ToolCallRecord): void {
    this.record({
      kind: "tool",
      tool: call.tool,
      input: JSON.stringify(call.input ?? null),
      output: call.output,
      ...(call.error !== undefined ? { error: call.error } : {}),
      startedAt: call.startedAt.toISOString(),
      durationMs: call.durationMs,
    });
  }

  /** A check of the task's answer (its outputJson, a guardrail): passed, or why the answer failed it. */
  guardrailCheck(check: GuardrailCheckRecord): void {
    this.record({
      kind: "guardrail",
      input: check.check,
      ...(check.reason === undefined ? { output: "passed" } : { error: check.reason }),
      startedAt: check.startedAt.toISOString(),
      durationMs: check.durationMs,
    });
  }

  /** Work handed to, or a question asked of, a coworker: what it was given and its answer (or why it failed). */
  delegation(record: DelegationRecord): void {
    this.record({
      kind: "delegation",
      tool: record.tool,
      coworker: record.coworker,
      input: record.request,
      ...(record.answer !== undefined ? { output: record.answer } : {}),
      ...(record.error !== undefined ? { error: record.error } : {}),
      startedAt: record.startedAt.toISOString(),
      durationMs: record.durationMs,
    });
  }

  /** The outcome's step fields (also the steps so far, while the task runs). */
  summary(): StepSummary {
    return { steps: boundSteps(this.steps), stepCount: this.count, toolsUsed: [...this.tools] };
  }

  /** A step as another runtime reported it (the crewai runtime's adapter), numbered here like the others. */
  record(fields: Omit<TaskStep, "index">): void {
    if (fields.tool !== undefined && !this.tools.includes(fields.tool)) this.tools.push(fields.tool);
    const step: TaskStep = { index: this.count++, ...fields };
    for (const key of ["coworker", "input", "output", "error"] as const) {
      if (step[key] !== undefined) step[key] = cutText(step[key], MAX_STEP_TEXT_CHARS);
    }
    // Only the first steps are stored (see core/task-step.ts): later ones need not be kept in memory either; the
    // older ones' texts are summarised by boundSteps.
    if (this.steps.length < MAX_STORED_STEPS) this.steps.push(step);
    this.onStep?.(step, this.summary());
  }
}
