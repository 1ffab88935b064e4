import { SpanKind, SpanStatusCode, trace, type Attributes } from "@opentelemetry/api";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from "@opentelemetry/semantic-conventions/incubating";
import { TRACER_NAME } from "../platform/telemetry/tracing.ts";
import { APPS_SOURCE_NAME } from "./apps-source.ts";

/** Where a tool comes from: an MCP server's tool (connected apps are the `apps` server), or a built-in. */
export type ToolSource = { server: string; tool: string } | { builtIn: string };

/** kubecrew's own attributes beside the GenAI convention's: the MCP server, the connected app. */
export const ATTR_KUBECREW_MCP_SERVER = "kubecrew.mcp.server";
export const ATTR_KUBECREW_APP = "kubecrew.app";

function sourceAttributes(source: ToolSource): Attributes {
  if ("builtIn" in source) return { [ATTR_GEN_AI_TOOL_TYPE]: "function" };
  // An app's action is `<app>__<action>`; the span names the app, never the credential the call carries.
  if (source.server === APPS_SOURCE_NAME) {
    return { [ATTR_GEN_AI_TOOL_TYPE]: "extension", [ATTR_KUBECREW_APP]: source.tool.split("__")[0] ?? source.tool };
  }
  return { [ATTR_GEN_AI_TOOL_TYPE]: "extension", [ATTR_KUBECREW_MCP_SERVER]: source.server };
}

/**
 * `run` with one span per call (GenAI's execute_tool), a child of the LLM turn's context. The tool's input and output
 * are not recorded: they may hold what the task is about, and secrets a tool was handed.
 */
export function traceToolCall<A extends unknown[]>(
  name: string,
  source: ToolSource,
  run: (...args: A) => Promise<string>,
): (...args: A) => Promise<string> {
  const tracer = trace.getTracer(TRACER_NAME);
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: name,
    ...sourceAttributes(source),
  };
  return (...args) =>
    tracer.startActiveSpan(
      `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${name}`,
      { kind: SpanKind.INTERNAL, attributes },
      async (span) => {
        try {
          return await run(...args);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
          throw error;
        } finally {
          span.end();
        }
      },
    );
}
