import type { StepBody } from "../core/execution-event-bodies.ts";

/** How the text commands write times, counts and steps. */

export const seconds = (s: number) =>
  s < 10 ? `${s.toFixed(2)} s` : s < 600 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

const milliseconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : seconds(ms / 1000));

/** A step's heading: what it was, on which attempt, how long it took, the tokens it used. */
export function stepHeading(step: StepBody, attempt: number): string {
  const what =
    step.kind === "tool"
      ? `tool ${step.tool ?? "(unnamed)"}`
      : step.kind === "guardrail"
        ? `check ${step.error === undefined ? "passed" : "failed"}`
        : step.kind === "delegation"
          ? `delegated to ${step.coworker ?? "(unnamed)"}`
          : step.kind === "decision"
            ? `${(step.decision ?? "decided").replace("_", " ")} by ${step.decided_by?.subject ?? "(unknown)"}${step.tool ? ` (${step.tool})` : ""}`
            : "LLM turn";
  return [
    `${what}${attempt > 1 ? ` (attempt ${attempt})` : ""}`,
    milliseconds(step.duration_ms),
    ...(step.token_usage ? [plural(step.token_usage.total_tokens, "token")] : []),
  ].join(" · ");
}
