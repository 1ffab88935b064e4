import { z } from "zod";
import type { WebhookAction } from "./due-webhooks.ts";
import { outputText } from "./flow/outcomes.ts";
import type { Json, JsonObject } from "./json.ts";

/**
 * Which webhooks a flow run calls for and nobody has delivered yet — a flow kickoff takes the crew kickoff's URLs:
 * `taskWebhookUrl` is POSTed once per method run that completed (event `method`: the method, its run, its output and
 * outcome), `crewWebhookUrl` once when the run has ended (event `flow`: completed or error, the final output, every
 * method's output). Level-based as dueWebhooks() is for crews: each hook has one key (`method:<method>#<n>`, `flow`),
 * due until the adapter records it as delivered (or given up). Pure: `kubecrew dev` and the controller both ask it.
 */

/** The webhook URLs of a run (a FlowExecution's spec.webhooks): the crew kickoff's fields. */
export const flowWebhookUrls = z.object({
  task: z.string().url().optional().describe("POSTed once per method run that completed (taskWebhookUrl)"),
  step: z.string().url().optional().describe("Accepted as a crew's stepWebhookUrl; flows send no step webhooks"),
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
}

/** The key of the run's final webhook. */
export const FLOW_HOOK = "flow";
/** The key of one method run's webhook (`<method>#<n>`: the method's nth run). */
export const methodHook = (activation: string) => `method:${activation}`;

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
  if (urls.crew && isOver(run.phase) && !delivered.has(FLOW_HOOK)) {
    due.push({ type: "webhook", hook: FLOW_HOOK, kind: "flow", url: urls.crew, payload: flowPayload(run) });
  }
  return due;
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
