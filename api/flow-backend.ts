import type { Requester } from "../core/execution.ts";
import type { FlowRunState } from "../core/flow/decide-flow.ts";
import type { FlowDefinition } from "../core/flow/definition.ts";
import type { FlowWebhookUrls } from "../core/flow-webhooks.ts";
import type { Json, JsonObject } from "../core/json.ts";

/** A flow the API serves, under `/flows/{name}/…`. */
export interface LoadedFlow {
  /** metadata.name, or the document's name as a DNS label. */
  name: string;
  definition: FlowDefinition;
  file: string;
}

export type FlowRunPhase = "Running" | "WaitingForInput" | "Succeeded" | "Failed" | "Stopped";

export interface MethodRun {
  /** `<method>#<n>`: the method's nth run. */
  id: string;
  method: string;
  phase: "Running" | "WaitingForInput" | "Succeeded" | "Failed";
  startTime: string;
  completionTime?: string;
  outcome?: string;
  error?: string;
}

/** One event of a run, as its event stream sends it. */
export interface FlowRunEvent {
  id: number;
  type: "method_started" | "method_completed" | "method_failed" | "human_feedback_requested" | "flow_finished";
  method?: string;
  data: Record<string, Json>;
}

export interface FlowRunView {
  id: string;
  flow: string;
  phase: FlowRunPhase;
  created: string;
  state: Record<string, Json>;
  /** CrewAI's `outputs.<method>`: each method's latest output. */
  outputs: Record<string, Json>;
  methods: MethodRun[];
  outcomes: FlowRunState["outcomes"];
  waiting?: { method: string; message: string; emit: string[]; output: Json };
  /** The output of the method that ended last (what CrewAI's kickoff answers). */
  result?: Json;
  error?: string;
  /** Seconds, once finished. */
  executionTime: number;
  startedAt: number;
  events: FlowRunEvent[];
}

/**
 * Where the API's flow routes find flows and their runs: `kubecrew dev` in memory (dev/flow-runs.ts), the cluster as
 * Flow and FlowExecution objects (api/kubernetes-flows.ts), whose writes and reads through answer later.
 */
export interface FlowBackend {
  listFlows(): LoadedFlow[];
  getFlow(name: string): LoadedFlow | undefined;
  /** `given`: the kickoff's meta and webhook URLs (checked against the outbound policy already). */
  kickoff(flow: LoadedFlow, state: Record<string, Json>, given?: FlowKickoffExtras): string | Promise<string>;
  getRun(flow: string, id: string): FlowRunView | undefined | Promise<FlowRunView | undefined>;
  /** The waiting method's feedback; answers the outcome chosen. */
  resume(run: FlowRunView, feedback: string): { outcome?: string } | Promise<{ outcome?: string }>;
  stop(run: FlowRunView): Promise<void>;
  onChange(id: string, listener: () => void): () => void;
  /**
   * The secret that signs the flow's webhooks where the backend holds it (`kubecrew dev`); without it the API names
   * the Secret that holds it (flowSigningSecretName).
   */
  webhookSigningSecret?(flow: string): string;
}

/** What a kickoff gives beside the state. */
export interface FlowKickoffExtras {
  meta?: JsonObject;
  webhooks?: FlowWebhookUrls;
  /** Who kicked it off, and whose connected apps its methods' child executions act with. */
  requestedBy?: Requester;
}
