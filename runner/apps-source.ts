import { readFile } from "node:fs/promises";
import { allowedAppActions, appToolName } from "../core/apps.ts";
import type { AssignedMcpServer } from "../core/task-tools.ts";
import { DEFAULT_MCP_TIMEOUT_SECONDS } from "../core/tools.ts";
import { KubecrewError } from "../core/errors.ts";

/** Where a task's connected apps are served (the integrations service's `/v1/mcp`) and its credential's file. */
export interface AppsSettings {
  url: string;
  /** The execution's app credential: the mounted Secret in a task pod, a private file under `kubecrew dev`. */
  credentialFile: string;
}

/** The MCP source's name in messages and tool-name clashes. */
export const APPS_SOURCE_NAME = "apps";

/** An agent with apps whose task cannot reach them: the message names what is missing, never the credential. */
export class AppsSourceError extends KubecrewError {
  readonly code = "apps_unavailable";
  override name = "AppsSourceError";
}

/**
 * The agent's connected apps as one more MCP server for its task: the apps service with the execution's credential as
 * bearer, offering exactly the `app__action` tools the agent's `apps` name (the credential covers the whole crew's).
 * Undefined for an agent without apps.
 */
export async function appsMcpServer(
  agent: { name: string; apps: string[] },
  settings: AppsSettings | undefined,
): Promise<AssignedMcpServer | undefined> {
  if (agent.apps.length === 0) return undefined;
  const declared = `agent "${agent.name}" declares apps (${agent.apps.join(", ")})`;
  if (!settings) {
    throw new AppsSourceError(`${declared}, but no apps service is configured for the runner (KUBECREW_APPS_URL)`);
  }
  const credential = await readFile(settings.credentialFile, "utf8").then(
    (text) => text.trim(),
    () => "",
  );
  if (!credential) {
    throw new AppsSourceError(`${declared}, but its execution's app credential is not at ${settings.credentialFile}`);
  }
  return {
    name: APPS_SOURCE_NAME,
    url: settings.url,
    transport: "streamable-http",
    headers: [{ name: "Authorization", value: `Bearer ${credential}` }],
    tools: allowedAppActions(agent.apps).map(appToolName),
    timeoutSeconds: DEFAULT_MCP_TIMEOUT_SECONDS,
  };
}
