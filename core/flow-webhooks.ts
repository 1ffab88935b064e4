import { z } from "zod";
import type { WebhookAction } from "./due-webhooks.ts";
import { outputText } from "./flow/outcomes.ts";
import type { Json, JsonObject } from "./json.ts";

/**
 * Which webhooks a flow run calls for and nobody has delivered yet — a flow kickoff takes the crew kickoff's URLs:
 * `taskWebhookUrl` is POSTed once per method run that completed (event `method`: the method, its run, its output and
 * outcome), `stepWebhookUrl` once per agent step its child executions took (event `step`, as a crew's step with the
 * method where a crew has its task), `crewWebhookUrl` once when the run has ended (event `flow`: completed or error,
 * the final output, every method's output). Level-based as dueWebhooks() is for crews: each hook has one key
 * (`method:<method>#<n>`, `step:<method>#<n>:<place>:<attempt>:<index>`, `flow`), due until the adapter records it as
 * delivered (or given up); a place's steps go one at a time, in order. Pure: `kubecrew dev` and the controller both
 * ask it.
 */

/** The webhook URLs of a run (a FlowExecution's spec.webhooks): the crew kickoff's fields. */
export const flowWebhookUrls = z.object({
  task: z.string().url().optional().describe("POSTed once per method run that completed (taskWebhookUrl)"),
  step: z.string().url().optional().describe("POSTed once per agent step a method run took (stepWebhookUrl)"),
  crew: z.string().url().optional().describe("POSTed once when the run has ended (crewWebhookUrl)"),
});
export type FlowWebhookUrls = z.infer<typeof flowWebhookUrls>;

/** What the hooks are computed from: a run as kubecrew dev holds it and as the controller reads a FlowExecution. */
export interface FlowRunForWebhooks {
  /** The kickoff_id. */
  id: string;
  flow: string;
  phase: "Pending" | "Running" | "WaitingForInput" | "Succeeded" | "Failed" | "Stopped";
  methods: readonly {
    id: string;
    method: string;
    phase: string;
    startTime: string;
    completionTime?: string;
    outcome?: string;
  }[];
  /** The output of the method that ended last (what /status answers as result.output). */
  result?: Json;
  /** CrewAI's outputs.<method>: each method's latest output. */
  outputs: Record<string, Json>;
  error?: string;
  /** Seconds, once ended. */
  executionTime: number;
  meta?: JsonObject;
  webhooks?: FlowWebhookUrls;
  /** The agent steps the method runs' child executions took so far (asked for only with a step URL). */
  steps?: readonly FlowMethodStep[];
}

/** One agent step of a method run, as a child execution of it reported it. */
export interface FlowMethodStep {
  /** The method run: `<method>#<n>`. */
  activation: string;
  /** Where in the method run it was taken: its child execution's task (an each has one child per item's step). */
  place: string;
  attempt: number;
  /** The step's index in its attempt. */
  index: number;
  /** The step as a crew's step webhook sends it (stepWireForm). */
  step: JsonObject;
}

/** The key of the run's final webhook. */
export const FLOW_HOOK = "flow";
/** The key of one method run's webhook (`<method>#<n>`: the method's nth run). */
export const methodHook = (activation: string) => `method:${activation}`;
/** The key of one step's webhook: the method run, the place in it, the attempt that took the step, its index. */
export const methodStepHook = (s: Omit<FlowMethodStep, "step">) =>
  `step:${s.activation}:${s.place}:${s.attempt}:${s.index}`;

const round = (n: number) => Math.round(n * 1000) / 1000;
const isOver = (phase: FlowRunForWebhooks["phase"]) =>
  phase === "Succeeded" || phase === "Failed" || phase === "Stopped";

/** `outputOf(activation)`: one method run's output (its result), undefined while it is not known. */
export function dueFlowWebhooks(
  run: FlowRunForWebhooks,
  outputOf: (activation: string) => Json | undefined,
  delivered: ReadonlySet<string>,
): WebhookAction[] {
  const urls = run.webhooks;
  if (!urls) return [];
  const due: WebhookAction[] = [];
  if (urls.task) {
    for (const m of run.methods) {
      const hook = methodHook(m.id);
      if (m.phase !== "Succeeded" || delivered.has(hook)) continue;
      const output = outputOf(m.id);
      if (output === undefined) continue;
      due.push({ type: "webhook", hook, kind: "method", url: urls.task, payload: methodPayload(run, m, output) });
    }
  }
  if (urls.step) due.push(...dueStepWebhooks(run, urls.step, delivered));
  if (urls.crew && isOver(run.phase) && !delivered.has(FLOW_HOOK)) {
    due.push({ type: "webhook", hook: FLOW_HOOK, kind: "flow", url: urls.crew, payload: flowPayload(run) });
  }
  return due;
}

/** Of each place, its first step not yet delivered (attempts in order): the next is due once that one is recorded. */
function dueStepWebhooks(run: FlowRunForWebhooks, url: string, delivered: ReadonlySet<string>): WebhookAction[] {
  const methods = new Map(run.methods.map((m) => [m.id, m.method]));
  const next = new Map<string, FlowMethodStep>();
  for (const s of run.steps ?? []) {
    if (!methods.has(s.activation) || delivered.has(methodStepHook(s))) continue;
    const place = `${s.activation}:${s.place}`;
    const first = next.get(place);
    if (!first || s.attempt < first.attempt || (s.attempt === first.attempt && s.index < first.index)) {
      next.set(place, s);
    }
  }
  return [...next.values()].map((s) => ({
    type: "webhook",
    hook: methodStepHook(s),
    kind: "step",
    url,
    payload: {
      kickoff_id: run.id,
      flow: run.flow,
      task_id: methods.get(s.activation)!,
      method: methods.get(s.activation)!,
      activation: s.activation,
      attempt: s.attempt,
      step: s.step,
      meta: run.meta ?? null,
    },
  }));
}

function methodPayload(run: FlowRunForWebhooks, m: FlowRunForWebhooks["methods"][number], output: Json): JsonObject {
  const seconds = m.completionTime ? (Date.parse(m.completionTime) - Date.parse(m.startTime)) / 1000 : 0;
  return {
    kickoff_id: run.id,
    flow: run.flow,
    task_id: m.method,
    name: m.method,
    method: m.method,
    activation: m.id,
    output: outputText(output),
    ...(typeof output === "object" && output !== null ? { json_dict: output } : {}),
    ...(m.outcome !== undefined ? { outcome: m.outcome } : {}),
    execution_time: round(Math.max(0, seconds)),
    meta: run.meta ?? null,
  };
}

function flowPayload(run: FlowRunForWebhooks): JsonObject {
  const completed = run.phase === "Succeeded";
  return {
    kickoff_id: run.id,
    flow: run.flow,
    status: completed ? "completed" : "error",
    result: completed ? outputText(run.result) : null,
    outputs: completed ? run.outputs : null,
    error: completed ? null : (run.error ?? (run.phase === "Stopped" ? "Execution stopped" : "Flow failed")),
    execution_time: round(run.executionTime),
    meta: run.meta ?? null,
  };
}
