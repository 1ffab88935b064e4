import { Agent as HttpAgent, type AgentOptions } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { LookupFunction, Socket } from "node:net";
import { isIP } from "node:net";
import { systemResolver, type Resolver } from "./outbound-fetch.ts";
import { OutboundRefusedError, refuseAddress, type OutboundPolicy } from "../../core/outbound/policy.ts";

/**
 * The outbound policy for SDKs that take a Node http(s).Agent instead of a fetch (the HubSpot client): every
 * connection's host is resolved once, refused when any address is, and connected to the address that was checked.
 */
export function createCheckedNodeAgent(
  policy: OutboundPolicy,
  protocol: "http:" | "https:",
  resolve: Resolver = systemResolver,
): HttpAgent {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), "", 4);
        for (const { address } of addresses) {
          const refused = refuseAddress(address, policy);
          if (refused)
            return callback(
              new OutboundRefusedError(refused.reason, `${hostname} resolves to ${address}: ${refused.message}`),
              "",
              4,
            );
        }
        if (options.all) return (callback as (e: null, a: typeof addresses) => void)(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(error, "", 4),
    );
  };
  const checkLiteral = (host: string | undefined | null): OutboundRefusedError | undefined => {
    const bare = (host ?? "").replace(/^\[(.*)\]$/, "$1");
    return isIP(bare) ? refuseAddress(bare, policy) : undefined;
  };
  // No keep-alive: an agent lives as long as one SDK client (one tool call); nothing idles after it.
  const options: AgentOptions = { keepAlive: false, lookup } as AgentOptions;
  const Base = protocol === "https:" ? HttpsAgent : HttpAgent;
  class CheckedAgent extends (Base as typeof HttpAgent) {
    // IP-literal hosts never reach lookup: judge them here.
    override createConnection(
      connectOptions: Parameters<HttpAgent["createConnection"]>[0],
      callback?: Parameters<HttpAgent["createConnection"]>[1],
    ) {
      const refused = checkLiteral((connectOptions as { host?: string }).host);
      if (refused) {
        callback?.(refused, undefined as unknown as Socket);
        return undefined;
      }
      return super.createConnection(connectOptions, callback);
    }
  }
  return new CheckedAgent(options);
}
