import { describe, expect, it } from "vitest";
import type { AssignedMcpServer } from "../core/task-tools.ts";
import { McpHeaderError, mcpHeaders } from "./mcp-headers.ts";

const server = (headers: AssignedMcpServer["headers"]): AssignedMcpServer => ({
  name: "docs",
  url: "https://docs.example.com/mcp",
  transport: "streamable-http",
  headers,
  timeoutSeconds: 30,
});

describe("mcpHeaders", () => {
  it("takes values as written and Secrets from the variable secretEnvName names", () => {
    const headers = mcpHeaders(
      server([
        { name: "X-Team", value: "7" },
        { name: "Authorization", valueFrom: { secretKeyRef: { name: "docs-token", key: "token" } } },
      ]),
      { KUBECREW_SECRET_DOCS_TOKEN_TOKEN: "Bearer abc" },
    );
    expect(headers).toEqual({ "X-Team": "7", Authorization: "Bearer abc" });
  });

  it("names the server, the header and the variable, never a value, when the Secret is missing", () => {
    const missing = server([
      { name: "X-Team", value: "visible-value" },
      { name: "Authorization", valueFrom: { secretKeyRef: { name: "docs-token", key: "token" } } },
    ]);
    const run = () => mcpHeaders(missing, { KUBECREW_SECRET_DOCS_TOKEN_TOKEN: "" });
    expect(run).toThrow(McpHeaderError);
    expect(run).toThrow(
      'MCP server "docs": header "Authorization" comes from Secret docs-token/token, but KUBECREW_SECRET_DOCS_TOKEN_TOKEN is not set for the runner',
    );
  });
});
