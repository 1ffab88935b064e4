import type { Json } from "../json.ts";
import { outcomesOf, type FlowMethod } from "./definition.ts";

/** The text of a method's output: a string as it is, an agent's or crew's `raw`, anything else as JSON. */
export function outputText(output: Json | undefined): string {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && !Array.isArray(output) && typeof output.raw === "string") {
    return output.raw;
  }
  return output === undefined || output === null ? "" : JSON.stringify(output);
}

/**
 * A router's outcome: the text of its output (CrewAI takes the result as the event's name). On the mock provider an
 * agent or crew router answers with its first outcome, so a flow takes a path with no model.
 */
export function routerOutcome(method: FlowMethod, output: Json, onMock: boolean): string {
  const outcomes = outcomesOf(method);
  if (onMock && outcomes.length && (method.do.call === "agent" || method.do.call === "crew")) return outcomes[0]!;
  return outputText(output).trim();
}

/**
 * The outcome a person's feedback chooses among a human_feedback's `emit`: none given → `default_outcome` (else the
 * first); an outcome named exactly (any case) → it; else the longest outcome the feedback names → it; else the first,
 * what the mock provider answers where CrewAI would ask its model to sum the feedback up.
 */
export function feedbackOutcome(method: FlowMethod, feedback: string): string | undefined {
  const emit = method.human_feedback?.emit ?? [];
  if (!emit.length) return undefined;
  const text = feedback.trim().toLowerCase();
  if (!text) return method.human_feedback?.default_outcome ?? emit[0];
  const exact = emit.find((o) => o.toLowerCase() === text);
  if (exact) return exact;
  const named = emit.filter((o) => text.includes(o.toLowerCase())).sort((a, b) => b.length - a.length)[0];
  return named ?? emit[0];
}
