import type { CrewSpec } from "./crew.ts";
import { displayUrl } from "./outbound/display-url.ts";
import { refuseUrl, type OutboundPolicy } from "./outbound/policy.ts";
import { mcpUrlServerName } from "./task-tools.ts";
import { parseMcpReference } from "./tools.ts";

/** An MCP server of a crew whose URL the runner's outbound policy refuses: its tool calls could never be made. */
export interface McpUrlRefusal {
  /** Where in the Crew: `spec.mcpServers[0].url` or `spec.agents[1].mcps[0]`. */
  field: string;
  /** The server's name as the runner names it: the `mcpServers` entry's, or mcpUrlServerName() for a URL in `mcps`. */
  server: string;
  /** The URL without query or credentials. */
  url: string;
  /** Why the policy refuses it. */
  reason: string;
}

/**
 * The crew's MCP server URLs (each `mcpServers[].url` and each URL in an agent's `mcps`) that `policy` refuses on
 * what can be judged without DNS (scheme, IP literals, `localhost`). Judged with the policy the runner applies to the
 * same URLs at tool time, so a URL refused here would be refused there; the runner still checks every resolved address.
 */
export function refusedMcpUrls(spec: Pick<CrewSpec, "mcpServers" | "agents">, policy: OutboundPolicy): McpUrlRefusal[] {
  const refusals: McpUrlRefusal[] = [];
  const check = (field: string, server: string, url: string) => {
    const refusal = refuseUrl(url, policy);
    if (refusal) refusals.push({ field, server, url: displayUrl(url), reason: refusal.message });
  };
  spec.mcpServers.forEach((server, i) => check(`spec.mcpServers[${i}].url`, server.name, server.url));
  spec.agents.forEach((agent, a) =>
    agent.mcps.forEach((reference, m) => {
      const parsed = parseMcpReference(reference);
      if (!parsed.isUrl) return;
      let name: string;
      try {
        name = mcpUrlServerName(parsed.target);
      } catch {
        name = parsed.target;
      }
      check(`spec.agents[${a}].mcps[${m}]`, name, parsed.target);
    }),
  );
  return refusals;
}

/** One line for a refusal, in the words the runner uses for a server it cannot use. */
export const refusalMessage = (r: McpUrlRefusal) => `MCP server "${r.server}" (${r.url}): ${r.reason}`;
