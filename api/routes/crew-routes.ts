import { Router, type Request, type Response } from "express";
import { inSpan } from "../../platform/telemetry/span.ts";
import { kickoffRequest, type KickoffRequest } from "../../core/api-bodies.ts";
import { isFinished } from "../../core/execution.ts";
import { executionUser } from "../../core/execution-user.ts";
import { IDEMPOTENCY_HEADER, idempotencyKeyHash, parseIdempotencyKey, requestHash } from "../../core/idempotency.ts";
import { discoverInputs, resolveInputs } from "../../core/inputs.ts";
import { refusedMcpUrls } from "../../core/mcp-url-refusals.ts";
import { refuseUrl, type OutboundPolicy } from "../../core/outbound/policy.ts";
import { bearerAuth, principalOf } from "../auth/bearer.ts";
import type { SessionAuth } from "../auth/session-auth.ts";
import type { TokenStore } from "../auth/token-store.ts";
import { ApiError, badRequest, forbidden, idempotencyKeyReused, mcpServersRefused, missingInputs } from "../errors.ts";
import type { ExecutionBackend } from "../execution-backend.ts";
import type { ApiMetrics } from "../metrics.ts";
import { parseOr400 } from "../validation.ts";
import { refuseWrongMethods } from "../../platform/http/wrong-methods.ts";
import { crewAccess } from "./crew-access.ts";
import { streamExecutionEvents, type EventStreamOptions } from "./event-stream.ts";
import { EXECUTIONS_LISTED, executionSummary, mayRead } from "./listings.ts";
import { resumeHandler } from "./resume.ts";
import { webhookSigningBody } from "./webhook-signing.ts";

export interface CrewRoutesDeps {
  backend: ExecutionBackend;
  tokens: TokenStore;
  /** The web console's sessions: its signed-in user calls these routes without a bearer token. */
  sessions?: SessionAuth;
  /** The crew a request is for: the `:crew` path segment, or the configured default crew at the root. */
  crewName(req: Request): string | undefined;
  /** Webhook URLs are checked against it at kickoff (and again after DNS resolution when delivered). */
  outboundPolicy: OutboundPolicy;
  /** The policy the task runner applies to the crew's MCP servers: kickoff refuses a crew whose URLs it refuses. */
  toolOutboundPolicy: OutboundPolicy;
  /** Timing of `GET /status/{id}/events` (tests shorten the heartbeat). */
  eventStream?: EventStreamOptions;
  /** Kickoffs by crew and the event streams open (absent: not counted). */
  metrics?: Pick<ApiMetrics, "kickedOff" | "streamOpened">;
}

const webhookFields = ["taskWebhookUrl", "stepWebhookUrl", "crewWebhookUrl"] as const;

/** The Authorization header a human-input webhook is delivered with, from the credentials its kickoff gave. */
function authorizationHeader(auth: NonNullable<KickoffRequest["humanInputWebhook"]>["authentication"]) {
  if (!auth) return undefined;
  const header =
    auth.strategy === "bearer"
      ? `Bearer ${auth.token}`
      : `Basic ${Buffer.from(`${auth.username}:${auth.password}`, "utf8").toString("base64")}`;
  return { strategy: auth.strategy, header };
}

/**
 * The deployed-crew API of one crew: `GET /inputs`, `POST /kickoff`, the event stream `GET /status/{id}/events`
 * (`GET /status/{id}` is api/routes/status-route.ts), `POST /resume` (a person's answer to a humanInput task), `POST /stop/{id}`, and for org
 * tokens `GET /webhook-signing`.
 */
export function crewRoutes(deps: CrewRoutesDeps): Router {
  const { backend } = deps;
  const router = Router({ mergeParams: true });
  const auth = bearerAuth(deps.tokens, deps.sessions);

  const { crewFor, visibleExecution } = crewAccess(backend, deps.crewName);

  router.get("/inputs", auth, async (req, res) => {
    const crew = await crewFor(req);
    res.json({ inputs: discoverInputs(crew.spec) });
  });

  router.post("/kickoff", auth, async (req, res) => {
    const crew = await crewFor(req);
    if (req.body === undefined && Number(req.headers["content-length"] ?? 0) > 0) {
      throw new ApiError(415, "Unsupported Media Type", "Send the kickoff body as application/json");
    }
    const idempotency = parseIdempotencyKey(req.get(IDEMPOTENCY_HEADER));
    if ("problem" in idempotency) {
      const message = `${IDEMPOTENCY_HEADER} ${idempotency.problem}`;
      throw badRequest(`Invalid kickoff request: ${message}`, [{ field: IDEMPOTENCY_HEADER, message }]);
    }
    const body = parseOr400(kickoffRequest, req.body ?? {}, "kickoff request");
    const urls: { field: string; url: string | undefined }[] = webhookFields.map((field) => ({
      field,
      url: body[field],
    }));
    urls.push({ field: "humanInputWebhook.url", url: body.humanInputWebhook?.url });
    const refused = urls.flatMap(({ field, url }) => {
      const refusal = url === undefined ? undefined : refuseUrl(url, deps.outboundPolicy);
      return refusal ? [{ field, message: refusal.message }] : [];
    });
    if (refused.length) {
      throw badRequest(
        `Invalid kickoff request: ${refused.map((d) => `${d.field}: ${d.message}`).join("; ")}`,
        refused,
      );
    }
    const principal = principalOf(req);
    const user = executionUser(principal, body.user, crew.spec.apps?.runAs);
    if (!user.ok) throw forbidden(user.message);
    const resolved = resolveInputs(crew.spec, body.inputs);
    if (!resolved.ok) throw missingInputs(resolved.missing);
    const refusedServers = refusedMcpUrls(crew.spec, deps.toolOutboundPolicy);
    if (refusedServers.length) throw mcpServersRefused(crew.metadata.name, refusedServers);
    const webhooks = {
      ...(body.taskWebhookUrl ? { task: body.taskWebhookUrl } : {}),
      ...(body.stepWebhookUrl ? { step: body.stepWebhookUrl } : {}),
      ...(body.crewWebhookUrl ? { crew: body.crewWebhookUrl } : {}),
    };
    const scope = { crew: crew.metadata.name, kind: principal.kind, subject: principal.subject };
    const authorization = authorizationHeader(body.humanInputWebhook?.authentication);
    // The kickoff's span is the trace's root: the execution (its annotation, or kubecrew dev's span) continues it.
    const outcome = await inSpan(
      `kickoff ${crew.metadata.name}`,
      { "kubecrew.crew": crew.metadata.name },
      async (span) => {
        const created = await backend.createExecution({
          crew: crew.metadata.name,
          spec: {
            crewRef: { name: crew.metadata.name },
            inputs: resolved.inputs,
            ...(body.meta ? { meta: body.meta } : {}),
            ...(Object.keys(webhooks).length ? { webhooks } : {}),
            ...(body.humanInputWebhook ? { humanInputWebhook: { url: body.humanInputWebhook.url } } : {}),
            requestedBy: {
              kind: principal.kind,
              subject: principal.subject,
              ...(user.user !== undefined ? { user: user.user } : {}),
            },
            stop: false,
          },
          ...(idempotency.key
            ? { idempotency: { keyHash: idempotencyKeyHash(scope, idempotency.key), requestHash: requestHash(body) } }
            : {}),
          ...(authorization ? { humanInputAuthorization: authorization } : {}),
        });
        span.setAttribute("kubecrew.execution", created.id);
        return created;
      },
    );
    if (outcome.kind === "keyReused") throw idempotencyKeyReused();
    if (outcome.kind === "replayed") res.set("Idempotent-Replayed", "true");
    else deps.metrics?.kickedOff(crew.metadata.name);
    res.json({ kickoff_id: outcome.id });
  });

  router.get("/status/:id/events", auth, async (req: Request<{ id: string }>, res: Response) => {
    const crew = await crewFor(req);
    const execution = await visibleExecution(req, crew, req.params.id);
    const closed = deps.metrics?.streamOpened();
    await streamExecutionEvents(
      req,
      res,
      execution,
      () => backend.getExecution(crew.metadata.name, execution.id),
      deps.eventStream,
      backend.onExecutionChange ? (onChange) => backend.onExecutionChange!(execution.id, onChange) : undefined,
    ).finally(closed);
  });

  router.get("/executions", auth, async (req, res) => {
    const crew = await crewFor(req);
    const principal = principalOf(req);
    const visible = (await backend.listExecutions(crew.metadata.name)).filter((e) => mayRead(principal, e));
    res.json({ executions: visible.slice(0, EXECUTIONS_LISTED).map((e) => executionSummary(e, crew)) });
  });

  router.post("/resume", auth, resumeHandler({ backend, outboundPolicy: deps.outboundPolicy, crewFor }));

  router.post("/stop/:id", auth, async (req, res) => {
    const crew = await crewFor(req);
    const execution = await visibleExecution(req, crew, String(req.params.id));
    if (isFinished(execution.status?.phase)) {
      throw badRequest(`Execution ${execution.id} has already finished (${execution.status?.phase})`);
    }
    await backend.stopExecution(crew.metadata.name, execution.id);
    res.json({ kickoff_id: execution.id, status: "stopping" });
  });

  router.get("/webhook-signing", auth, async (req, res) => {
    const crew = await crewFor(req);
    if (principalOf(req).kind !== "org")
      throw forbidden("Only an org token may read the crew's webhook signing secret");
    res.set("Cache-Control", "no-store").json(webhookSigningBody(backend, crew));
  });

  refuseWrongMethods(router);
  return router;
}
