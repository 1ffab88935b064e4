import { Router, type Request, type Response } from "express";
import { executionUser } from "../../core/execution-user.ts";
import { flowGraph } from "../../core/flow/flow-graph.ts";
import { flowInputs, kickoffState } from "../../core/flow/state-inputs.ts";
import type { Json } from "../../core/json.ts";
import { refuseUrl, type OutboundPolicy } from "../../core/outbound/policy.ts";
import { bearerAuth, principalOf } from "../auth/bearer.ts";
import { mayUseCrew } from "../auth/principal.ts";
import type { SessionAuth } from "../auth/session-auth.ts";
import type { TokenStore } from "../auth/token-store.ts";
import { ApiError, badRequest, executionNotFound, forbidden, unauthorized } from "../errors.ts";
import type { FlowBackend, FlowRunView, LoadedFlow } from "../flow-backend.ts";
import { flowKickoffRequest, flowResumeRequest, type FlowStatusResponse } from "../flow-bodies.ts";
import type { FlowWebhookUrls } from "../../core/flow-webhooks.ts";
import { parseOr400 } from "../validation.ts";
import { refuseWrongMethods } from "../../platform/http/wrong-methods.ts";
import { inSpan } from "../../platform/telemetry/span.ts";

const flowNotFound = (name: string) => new ApiError(404, "Flow not found", `No flow named "${name}"`);

/** AMP's three `/status` shapes for a flow run: `current_task` names the running method; progress counts methods. */
export function flowStatusBody(run: FlowRunView, flow: LoadedFlow, now: number): FlowStatusResponse {
  const done = run.methods.filter((m) => m.phase === "Succeeded").length;
  const executionTime = run.executionTime || Math.round(now - run.startedAt) / 1000;
  if (run.phase === "Succeeded") {
    const tasks = run.methods
      .filter((m) => m.phase === "Succeeded")
      .map((m) => ({ task_id: m.method, output: text(run.outputs[m.method]), agent: "", execution_time: seconds(m) }));
    return {
      status: "completed",
      state: "SUCCESS",
      result: { output: text(run.result), tasks, outputs: run.outputs, outcomes: run.outcomes },
      execution_time: executionTime,
    };
  }
  if (run.phase === "Failed" || run.phase === "Stopped") {
    return { status: "error", state: "FAILED", error: run.error ?? "Flow failed", execution_time: executionTime };
  }
  const current = run.waiting?.method ?? run.methods.filter((m) => m.phase === "Running").at(-1)?.method;
  return {
    status: "running",
    state: run.phase === "WaitingForInput" ? "PENDING_HUMAN_INPUT" : "RUNNING",
    current_task: current ?? Object.keys(flow.definition.methods)[0]!,
    progress: { completed_tasks: done, total_tasks: Math.max(done, Object.keys(flow.definition.methods).length) },
    ...(run.waiting
      ? {
          human_feedback: {
            method: run.waiting.method,
            message: run.waiting.message,
            emit: run.waiting.emit,
            output: text(run.waiting.output),
          },
        }
      : {}),
  };
}

function text(value: Json | undefined): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && !Array.isArray(value) && typeof value.raw === "string") return value.raw;
  return value === undefined ? "" : JSON.stringify(value);
}

function seconds(m: { startTime: string; completionTime?: string }): number {
  return m.completionTime ? (Date.parse(m.completionTime) - Date.parse(m.startTime)) / 1000 : 0;
}

/**
 * Declarative CrewAI flows served as AMP serves deployed flows: `GET /flows`, and per flow at `/flows/{flow}/`
 * `GET /inputs` (the state schema's fields), `POST /kickoff` (inputs checked against the state schema: 422 with the
 * missing and invalid fields), `GET /status/{id}` and its event stream, `POST /resume` (a human_feedback's answer),
 * `POST /stop/{id}`, and for org tokens `GET /webhook-signing` where the backend holds the secret (`kubecrew dev`).
 */
export function flowRoutes(deps: {
  flows: FlowBackend;
  tokens: TokenStore;
  sessions?: SessionAuth;
  /** Webhook URLs are checked against it at kickoff (and again after DNS resolution when delivered). */
  outboundPolicy: OutboundPolicy;
}): Router {
  const router = Router();
  const auth = bearerAuth(deps.tokens, deps.sessions);
  const flowFor = (req: Request): LoadedFlow => {
    const name = String(req.params.flow);
    if (!mayUseCrew(principalOf(req), name)) throw unauthorized();
    const flow = deps.flows.getFlow(name);
    if (!flow) throw flowNotFound(name);
    return flow;
  };
  const runFor = async (req: Request, flow: LoadedFlow, id: string): Promise<FlowRunView> => {
    const run = await deps.flows.getRun(flow.name, id);
    if (!run) throw executionNotFound(id);
    return run;
  };

  router.get("/flows", auth, (req, res) => {
    const principal = principalOf(req);
    const flows = deps.flows
      .listFlows()
      .filter((f) => mayUseCrew(principal, f.name))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((f) => ({
        name: f.name,
        flow: f.definition.name,
        description: f.definition.description ?? "",
        inputs: flowInputs(f.definition),
        methods: Object.keys(f.definition.methods),
        graph: flowGraph(f.definition),
      }));
    res.json({ flows });
  });
  router.get("/flows/:flow/inputs", auth, (req, res) => {
    res.json({ inputs: flowInputs(flowFor(req).definition) });
  });
  router.post("/flows/:flow/kickoff", auth, async (req, res) => {
    const flow = flowFor(req);
    const body = parseOr400(flowKickoffRequest, req.body ?? {}, "kickoff body");
    const webhooks = kickoffWebhooks(body, deps.outboundPolicy);
    const judged = kickoffState(flow.definition, body.inputs as Record<string, Json>);
    if (!judged.ok) {
      const parts = [
        ...(judged.missing.length ? [`Missing required inputs: ${judged.missing.join(", ")}`] : []),
        ...(judged.invalid.length ? [`Invalid inputs: ${judged.invalid.join("; ")}`] : []),
      ];
      throw new ApiError(422, "Unprocessable Entity", parts.join(". "), {
        missing_inputs: judged.missing,
        invalid_inputs: judged.invalid,
      });
    }
    // Whose apps the child executions act with, decided as a crew kickoff decides it (a flow has no apps.runAs).
    const principal = principalOf(req);
    const user = executionUser(principal, body.user, undefined);
    if (!user.ok) throw forbidden(user.message);
    const requestedBy = {
      kind: principal.kind,
      subject: principal.subject,
      ...(user.user !== undefined ? { user: user.user } : {}),
    };
    const given = { ...(body.meta ? { meta: body.meta } : {}), ...(webhooks ? { webhooks } : {}), requestedBy };
    // The kickoff's span is the run's trace's root: the run keeps its traceparent (an annotation, or kubecrew dev's
    // run), its webhook deliveries' spans and its methods' child executions continue it.
    const id = await inSpan(`kickoff ${flow.name}`, { "kubecrew.flow": flow.name }, async (span) => {
      const id = await deps.flows.kickoff(flow, judged.state, given);
      span.setAttribute("kubecrew.execution", id);
      return id;
    });
    res.json({ kickoff_id: id });
  });
  router.get("/flows/:flow/webhook-signing", auth, (req, res) => {
    const flow = flowFor(req);
    if (principalOf(req).kind !== "org") {
      throw forbidden("Only an org token may read the flow's webhook signing secret");
    }
    if (!deps.flows.webhookSigningSecret) {
      throw new ApiError(404, "Not Found", "On a cluster the flow's signing secret is in a Secret (docs/flows.md)");
    }
    res.set("Cache-Control", "no-store").json({ generated: true, secret: deps.flows.webhookSigningSecret(flow.name) });
  });
  router.get("/flows/:flow/status/:id", auth, async (req, res) => {
    const flow = flowFor(req);
    res.json(flowStatusBody(await runFor(req, flow, String(req.params.id)), flow, Date.now()));
  });
  router.get("/flows/:flow/status/:id/events", auth, async (req, res) => {
    const flow = flowFor(req);
    streamFlowEvents(deps.flows, flow, await runFor(req, flow, String(req.params.id)), req, res);
  });
  router.post("/flows/:flow/resume", auth, async (req, res) => {
    const flow = flowFor(req);
    const body = parseOr400(flowResumeRequest, req.body ?? {}, "resume body");
    const run = await runFor(req, flow, body.execution_id);
    if (run.phase !== "WaitingForInput" || !run.waiting || (body.task_id && body.task_id !== run.waiting.method)) {
      throw new ApiError(409, "Conflict", "Execution is not in pending human input state");
    }
    const { outcome } = await deps.flows.resume(run, body.human_feedback);
    res.json({
      status: "resumed",
      message: `Method ${run.waiting?.method ?? ""} resumed`.trim(),
      ...(outcome ? { outcome } : {}),
    });
  });
  router.post("/flows/:flow/stop/:id", auth, async (req, res) => {
    const flow = flowFor(req);
    const run = await runFor(req, flow, String(req.params.id));
    if (["Succeeded", "Failed", "Stopped"].includes(run.phase)) {
      throw new ApiError(409, "Conflict", "Execution has already finished");
    }
    await deps.flows.stop(run);
    res.json({ status: "stopped" });
  });
  refuseWrongMethods(router);
  return router;
}

const webhookFields = { taskWebhookUrl: "task", stepWebhookUrl: "step", crewWebhookUrl: "crew" } as const;

/** The kickoff's webhook URLs, each checked against the outbound policy as a crew kickoff's are (400 naming each). */
function kickoffWebhooks(
  body: Partial<Record<keyof typeof webhookFields, string>>,
  policy: OutboundPolicy,
): FlowWebhookUrls | undefined {
  const urls: FlowWebhookUrls = {};
  const refused: { field: string; message: string }[] = [];
  for (const [field, key] of Object.entries(webhookFields) as [keyof typeof webhookFields, keyof FlowWebhookUrls][]) {
    const url = body[field];
    if (url === undefined) continue;
    const refusal = refuseUrl(url, policy);
    if (refusal) refused.push({ field, message: refusal.message });
    urls[key] = url;
  }
  if (refused.length) {
    throw badRequest(`Invalid kickoff request: ${refused.map((d) => `${d.field}: ${d.message}`).join("; ")}`, refused);
  }
  return Object.keys(urls).length ? urls : undefined;
}

/**
 * Server-sent events of a run: each method's start and end, a wait for feedback, the end; resumable by id. On each
 * change the run is read again (in memory the same object; in the cluster a new view of the FlowExecution).
 */
function streamFlowEvents(flows: FlowBackend, flow: LoadedFlow, first: FlowRunView, req: Request, res: Response): void {
  const after = Number(req.get("last-event-id") ?? req.query.lastEventId ?? 0) || 0;
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
  let sent = after;
  let ended = false;
  const write = (run: FlowRunView) => {
    if (ended) return;
    for (const e of run.events.slice(sent)) {
      res.write(
        `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e.data, ...(e.method ? { method: e.method } : {}), event: e.type })}\n\n`,
      );
      sent = e.id;
    }
    if (run.events.at(-1)?.type === "flow_finished") {
      ended = true;
      unsubscribe();
      res.end();
    }
  };
  let reading: Promise<void> | undefined;
  let again = false;
  const refresh = () => {
    if (reading) {
      again = true;
      return;
    }
    reading = (async () => {
      do {
        again = false;
        const run = await flows.getRun(flow.name, first.id);
        if (run) write(run);
      } while (again && !ended);
    })()
      .catch(() => undefined)
      .finally(() => {
        reading = undefined;
        // A change after the last read but before this ran set `again` and left the read to this one.
        if (again && !ended) refresh();
      });
  };
  const unsubscribe = flows.onChange(first.id, refresh);
  req.on("close", () => {
    ended = true;
    unsubscribe();
  });
  write(first);
}
