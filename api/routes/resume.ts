import type { Request, Response } from "express";
import { resumeRequest, type ResumeResponse } from "../../core/api-bodies.ts";
import type { Crew } from "../../core/crew.ts";
import { refuseUrl, type OutboundPolicy } from "../../core/outbound/policy.ts";
import { judgeResume, type ResumeVerdict } from "../../core/resume.ts";
import { judgeToolCall, type ToolCallVerdict } from "../../core/tool-call-resume.ts";
import { principalOf } from "../auth/bearer.ts";
import { ApiError, badRequest, executionNotFound, forbidden } from "../errors.ts";
import type { DecisionChange, ExecutionBackend } from "../execution-backend.ts";
import { parseOr400 } from "../validation.ts";
import { mayRead } from "./listings.ts";

/**
 * `POST /resume` as CrewAI AMP defines it: a person's verdict on the answer a humanInput task waits with —
 * `is_approve: true` accepts it (its feedback goes to the later tasks with the output), `false` runs the task again
 * with the feedback. The decision is appended to the execution's spec.decisions (the controller acts on it); the
 * webhook URLs the body gives replace the execution's, as AMP asks clients to send them again on resume. With a
 * `tool_call_id` the verdict is on a tool call held by the crew's toolPolicy.requireApproval (core/tool-call-resume.ts).
 */

export interface ResumeDeps {
  backend: ExecutionBackend;
  outboundPolicy: OutboundPolicy;
  /** The crew the request names, if the caller's token may use it (crew-routes.ts). */
  crewFor(req: Request): Promise<Crew>;
  now?: () => Date;
}

const webhookFields = ["taskWebhookUrl", "stepWebhookUrl", "crewWebhookUrl"] as const;

const taskNotFound = (message: string) => new ApiError(404, "Task not found", message);

export function resumeHandler(deps: ResumeDeps) {
  return async (req: Request, res: Response) => {
    const crew = await deps.crewFor(req);
    const body = parseOr400(resumeRequest, req.body ?? {}, "resume request");
    const refused = webhookFields.flatMap((field) => {
      const url = body[field];
      const refusal = url === undefined ? undefined : refuseUrl(url, deps.outboundPolicy);
      return refusal ? [{ field, message: refusal.message }] : [];
    });
    if (refused.length) {
      throw badRequest(`Invalid resume request: ${refused.map((d) => `${d.field}: ${d.message}`).join("; ")}`, refused);
    }
    if (!deps.backend.recordDecision) throw new ApiError(501, "Not Implemented", "This backend cannot resume");
    const principal = principalOf(req);
    const id = body.execution_id.toLowerCase();
    const given = {
      ...(body.taskWebhookUrl ? { task: body.taskWebhookUrl } : {}),
      ...(body.stepWebhookUrl ? { step: body.stepWebhookUrl } : {}),
      ...(body.crewWebhookUrl ? { crew: body.crewWebhookUrl } : {}),
    };
    const ask = {
      task: body.task_id,
      approve: body.is_approve,
      feedback: body.human_feedback,
      by: { kind: principal.kind, subject: principal.subject },
    };
    const now = deps.now ?? (() => new Date());
    const toolCallId = body.tool_call_id;
    if (toolCallId !== undefined) {
      const toolAsk = { ...ask, toolCallId, principal };
      const judged = await deps.backend.recordDecision<ToolCallVerdict | undefined>(
        crew.metadata.name,
        id,
        (execution) => {
          if (!mayRead(principal, execution)) return { result: undefined };
          const verdict = judgeToolCall(execution, crew.spec, toolAsk, now());
          if (!verdict.ok) return { result: verdict };
          const change: DecisionChange = {
            decisions: [...(execution.spec.decisions ?? []), verdict.decision],
            ...(Object.keys(given).length ? { webhooks: given } : {}),
          };
          return { change, result: verdict };
        },
      );
      // Another user's execution is not there for this caller; a call they see but may not decide names who may.
      if (!judged) throw executionNotFound(body.execution_id);
      if (!judged.ok) {
        if (judged.problem === "notDecider") throw forbidden(judged.message);
        if (judged.problem === "unknownTask") throw taskNotFound(judged.message);
        throw badRequest(judged.message);
      }
      const answer: ResumeResponse = { status: judged.status, message: judged.message };
      res.json(answer);
      return;
    }
    const verdict = await deps.backend.recordDecision<ResumeVerdict | undefined>(
      crew.metadata.name,
      id,
      (execution) => {
        // A user token may decide only on what it started: another's execution is not there for it.
        if (!mayRead(principal, execution)) return { result: undefined };
        const judged = judgeResume(execution, crew.spec, ask, now());
        if (!judged.ok) return { result: judged };
        const change: DecisionChange = {
          decisions: [...(execution.spec.decisions ?? []), judged.decision],
          ...(Object.keys(given).length ? { webhooks: given } : {}),
        };
        return { change, result: judged };
      },
    );
    if (!verdict) throw executionNotFound(body.execution_id);
    if (!verdict.ok) {
      if (verdict.problem === "unknownTask") throw taskNotFound(verdict.message);
      throw badRequest(verdict.message);
    }
    const answer: ResumeResponse = { status: verdict.status, message: verdict.message };
    res.json(answer);
  };
}
