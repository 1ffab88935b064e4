import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { AppCredentialClaims } from "../../core/app-credential.ts";
import { allowedAppActions, appToolName } from "../../core/apps.ts";
import { appActionDefinition } from "./app-actions.ts";
import type { AppToolCalls } from "./app-tool-calls.ts";

/** An MCP server with exactly the tools the credential's apps allow (an app: all its actions; app/action: that one). */
export function appsMcpServer(claims: AppCredentialClaims, calls: AppToolCalls): McpServer {
  const server = new McpServer({ name: "kubecrew-apps", version: "1.0.0" }, { capabilities: { tools: {} } });
  let registered = 0;
  for (const action of allowedAppActions(claims.apps)) {
    const definition = appActionDefinition(action);
    if (!definition) continue;
    server.registerTool(
      appToolName(action),
      { description: definition.description, inputSchema: definition.input },
      (input, extra) => calls.call(claims, action, definition, input as Record<string, unknown>, extra.signal),
    );
    registered += 1;
  }
  // McpServer answers tools/list only once a tool is registered; a credential without apps lists none.
  if (registered === 0) server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  return server;
}
