import type { FlowMethod } from "./definition.ts";

/**
 * The mock provider stands in for the person a `human_feedback` waits for, so a flow on the mock runs to its end with
 * no one at the keyboard: after a while without `/resume` the method takes its first outcome with empty feedback, as a
 * model asked to choose would. Only where the feedback's model is the mock: the method's own `llm`, else the flow's.
 */

/** Whether the method's feedback is on the mock: its own `llm` names it, or it names none and the flow's is the mock. */
export function feedbackOnMock(method: FlowMethod, flowOnMock: boolean): boolean {
  const llm = method.human_feedback?.llm;
  if (llm === undefined || llm === null) return flowOnMock;
  return typeof llm === "string" && /^mock(\/|$)/.test(llm);
}

/** The mock's answer: empty feedback, the first outcome (none without `emit`). */
export function mockFeedback(method: FlowMethod): { feedback: string; outcome?: string } {
  const outcome = method.human_feedback?.emit?.[0];
  return outcome === undefined ? { feedback: "" } : { feedback: "", outcome };
}

/** Milliseconds until the mock answers a wait that began at `since`; undefined when it never does. */
export function mockFeedbackDueInMs(
  method: FlowMethod,
  flowOnMock: boolean,
  since: string | undefined,
  afterMs: number,
  now: Date,
): number | undefined {
  if (afterMs <= 0 || since === undefined || !feedbackOnMock(method, flowOnMock)) return undefined;
  return Math.max(0, Date.parse(since) + afterMs - now.getTime());
}
