import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from "@opentelemetry/semantic-conventions";
import type { RequestHandler } from "express";
import { appCatalogue, appToolName } from "../core/apps.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { TRACER_NAME } from "../platform/telemetry/tracing.ts";
import type { AppToolCalls } from "./apps/app-tool-calls.ts";

/**
 * The integrations service's spans: one per HTTP request it serves, one per app action it carries out for an agent,
 * one per HTTP request it makes (the provider APIs, their token endpoints). They name routes, apps and hosts — never a
 * URL's path or query (connect links carry one-time session ids, callbacks authorization codes), a header, a token
 * or a user's data. With tracing off (no OTLP endpoint) they are OpenTelemetry's no-op spans.
 */

const tracer = () => trace.getTracer(TRACER_NAME);

/** The app an action belongs to and its provider, as kubecrew names them. */
export const ATTR_KUBECREW_APP = "kubecrew.app";
export const ATTR_KUBECREW_APP_ACTION = "kubecrew.app.action";
export const ATTR_KUBECREW_APP_PROVIDER = "kubecrew.app.provider";

function failed(span: Span, error: unknown): never {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : "error");
  throw error;
}

/**
 * A SERVER span per request, continuing the caller's W3C trace context when it sends one (a runner's MCP call) and
 * named by the route that answered it (`POST /v1/mcp`), known once the response is sent.
 */
export function requestSpans(): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer().startSpan(
      `${req.method}`,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method } },
      parent,
    );
    let ended = false;
    // "close" alone when the client went away before the answer was sent.
    const end = () => {
      if (ended) return;
      ended = true;
      const route = (req.route as { path?: string } | undefined)?.path;
      if (route) {
        // The router's mount path and its pattern: the route's shape, no parameter's value.
        const pattern = `${req.baseUrl}${route}`;
        span.updateName(`${req.method} ${pattern}`);
        span.setAttribute(ATTR_HTTP_ROUTE, pattern);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.on("finish", end);
    res.on("close", end);
    context.with(trace.setSpan(parent, span), next);
  };
}

/** The app tool calls, each in a CLIENT span naming the app, the action and the provider (a refusal is an error). */
export function tracedAppToolCalls(calls: AppToolCalls): AppToolCalls {
  return {
    call: (claims, action, definition, input, signal) =>
      tracer().startActiveSpan(
        `app ${appToolName(action)}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_KUBECREW_APP]: action.app,
            [ATTR_KUBECREW_APP_ACTION]: action.action,
            [ATTR_KUBECREW_APP_PROVIDER]: appCatalogue[action.app].provider,
          },
        },
        async (span) => {
          try {
            const result = await calls.call(claims, action, definition, input, signal);
            // The tool's answer is for the model; the span says only that it was an error.
            if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: "tool error" });
            return result;
          } catch (error) {
            failed(span, error);
          } finally {
            span.end();
          }
        },
      ),
  };
}

/** The outbound fetch with a CLIENT span per request: its method, host and port, and the answer's status. */
export function tracedFetch(fetch: Fetch): Fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    return tracer().startActiveSpan(
      method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_SERVER_ADDRESS]: url.hostname,
          [ATTR_SERVER_PORT]: Number(url.port) || (url.protocol === "https:" ? 443 : 80),
        },
      },
      async (span) => {
        try {
          const res = await fetch(input, init);
          span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.status);
          if (res.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
          return res;
        } catch (error) {
          failed(span, error);
        } finally {
          span.end();
        }
      },
    );
  };
}
