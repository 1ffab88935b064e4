import { resolveAppReference } from "../apps.ts";
import { httpUrl, mcpReference, parseMcpReference, type McpServer } from "../tools.ts";
import { CREWAI_RUNTIME, PYTHON } from "./field-rules.ts";
import type { Findings } from "./findings.ts";

/** An MCP server of the crew, as the Crew's spec.mcpServers lists it (defaults left to the schema). */
export type McpServerInput = Pick<McpServer, "name" | "url"> & Partial<Pick<McpServer, "transport" | "headers">>;

/** What an agent's CrewAI tools, mcps and apps become. */
export interface AgentTools {
  mcps: string[];
  apps: string[];
  servers: McpServerInput[];
}

const PLATFORM_PREFIX = "platform:";

const pythonTool = (name: string) =>
  `tool ${JSON.stringify(name)} is Python, which the kubecrew runtime does not run: kubecrew agents act through MCP ` +
  `servers (mcps), http_request and connected apps — serve the tool from an MCP server and list it in mcps, ${CREWAI_RUNTIME}`;

/**
 * CrewAI's agent `tools`: `platform:<app>` (an app of CrewAI AMP, by the names kubecrew's connected apps use too)
 * becomes one of the agent's apps; every other tool is a Python class and is refused.
 */
export function agentToolsFromCrewAI(value: unknown, at: string, into: AgentTools, findings: Findings): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    findings.problem(at, "must be a list of tools");
    return;
  }
  for (const [i, tool] of value.entries()) {
    const where = `${at}[${i}]`;
    if (typeof tool === "string" && tool.startsWith(PLATFORM_PREFIX)) {
      addApp(tool.slice(PLATFORM_PREFIX.length), where, into, findings);
    } else if (typeof tool === "string") {
      // An empty string is skipped by CrewAI too.
      if (tool) findings.problem(where, pythonTool(tool));
    } else if (tool !== null && typeof tool === "object") {
      findings.problem(where, pythonTool(String((tool as { name?: unknown }).name ?? "(a serialized tool)")));
    } else {
      findings.problem(where, "must be a tool's name or definition");
    }
  }
}

/** CrewAI's agent `apps`: an app (`gmail`) or one action (`gmail/send_email`), the names kubecrew's apps use. */
export function agentAppsFromCrewAI(value: unknown, at: string, into: AgentTools, findings: Findings): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    findings.problem(at, "must be a list of apps");
    return;
  }
  for (const [i, app] of value.entries()) {
    if (typeof app !== "string") findings.problem(`${at}[${i}]`, "must be an app's name");
    else addApp(app, `${at}[${i}]`, into, findings);
  }
}

function addApp(reference: string, at: string, into: AgentTools, findings: Findings): void {
  if (!resolveAppReference(reference)) {
    findings.problem(at, `kubecrew has no connected app or action "${reference}" (see docs/connected-apps.md)`);
  } else if (!into.apps.includes(reference)) {
    into.apps.push(reference);
  }
}

/**
 * CrewAI's agent `mcps`: an http(s) URL with an optional `#tool` is kept as it is; a server written out
 * ({url, headers, streamable}) becomes an entry of spec.mcpServers named after the agent; a name of an MCP
 * integration connected in CrewAI AMP, a local (stdio) server or a Python reference is refused.
 */
export function agentMcpsFromCrewAI(
  value: unknown,
  at: string,
  agent: string,
  into: AgentTools,
  findings: Findings,
): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    findings.problem(at, "must be a list of MCP servers");
    return;
  }
  for (const [i, entry] of value.entries()) {
    const where = `${at}[${i}]`;
    if (typeof entry === "string") {
      const parsed = parseMcpReference(entry);
      if (parsed.isUrl && mcpReference.safeParse(entry).success) into.mcps.push(entry);
      else if (parsed.isUrl) findings.problem(where, `"${entry}" is not a URL kubecrew can call`);
      else {
        findings.problem(
          where,
          `"${entry}" names an MCP integration connected in CrewAI AMP: give the server's URL instead ` +
            "(https://…/mcp, with #tool for one tool)",
        );
      }
      continue;
    }
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      findings.problem(where, "must be an MCP server's URL or its settings");
      continue;
    }
    const server = serverFromSettings(entry as Record<string, unknown>, where, `${agent}-mcp-${i + 1}`, findings);
    if (server) {
      into.servers.push(server);
      into.mcps.push(server.name);
    }
  }
}

function serverFromSettings(
  settings: Record<string, unknown>,
  at: string,
  name: string,
  findings: Findings,
): McpServerInput | undefined {
  if ("python" in settings) {
    findings.problem(at, `a Python reference: ${PYTHON}`);
    return undefined;
  }
  if ("command" in settings) {
    findings.problem(
      at,
      "a local (stdio) MCP server: kubecrew connects to MCP servers over HTTP — run it behind a streamable HTTP " +
        "transport and give its URL",
    );
    return undefined;
  }
  const { url, headers, streamable, cache_tools_list: _cacheToolsList, tool_filter, ...rest } = settings;
  let ok = true;
  for (const key of Object.keys(rest)) {
    findings.problem(`${at}.${key}`, "is not a setting of an MCP server");
    ok = false;
  }
  if (tool_filter !== undefined && tool_filter !== null) {
    findings.problem(
      `${at}.tool_filter`,
      "a tool filter is Python: list the tools you want instead, one mcps entry per tool as url#tool",
    );
    ok = false;
  }
  if (typeof url !== "string" || !httpUrl.safeParse(url).success) {
    findings.problem(`${at}.url`, "must be the server's http(s) URL");
    return undefined;
  }
  const headerList: { name: string; value: string }[] = [];
  if (headers !== undefined && headers !== null) {
    if (typeof headers !== "object" || Array.isArray(headers)) {
      findings.problem(`${at}.headers`, "must map header names to values");
      ok = false;
    } else {
      for (const [header, value] of Object.entries(headers)) {
        if (typeof value !== "string") {
          findings.problem(`${at}.headers.${header}`, "must be a text");
          ok = false;
        } else headerList.push({ name: header, value });
      }
      if (headerList.length) {
        findings.note(
          `${at}.headers`,
          `carried in clear into spec.mcpServers "${name}": move a secret value into a Secret (valueFrom.secretKeyRef)`,
        );
      }
    }
  }
  if (!ok) return undefined;
  return {
    name,
    url,
    ...(streamable === false ? { transport: "sse" as const } : {}),
    ...(headerList.length ? { headers: headerList } : {}),
  };
}

/**
 * CrewAI's task `tools` replace its agent's tools for that task. Every such tool is Python; an empty list (the
 * agent's own tools) asks for nothing.
 */
export function taskToolsFromCrewAI(value: unknown, at: string, findings: Findings): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    findings.problem(at, "must be a list of tools");
    return;
  }
  for (const [i, tool] of value.entries()) {
    if (typeof tool === "string" && tool.startsWith(PLATFORM_PREFIX)) {
      findings.problem(`${at}[${i}]`, "give the app to the task's agent (its apps) instead");
    } else if (tool !== "") {
      findings.problem(`${at}[${i}]`, pythonTool(typeof tool === "string" ? tool : "(a serialized tool)"));
    }
  }
}
