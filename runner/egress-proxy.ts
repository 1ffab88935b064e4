import type { LookupAddress, LookupOneOptions } from "node:dns";
import { isIP } from "node:net";
import { RequestError, Server, type PrepareRequestFunctionOpts, type PrepareRequestFunctionResult } from "proxy-chain";
import { systemResolver, type Resolver } from "../platform/outbound/outbound-fetch.ts";
import { refuseAddress, refuseUrl, type OutboundPolicy } from "../core/outbound/policy.ts";

/** A refused destination as the child process sees it: status 403, the policy's message as the body. */
export const REFUSED_STATUS = 403;

/** A header on the proxy's own refusals, so a client can tell them from a destination's 403 (`refused`). */
export const REFUSED_HEADER = "x-kubecrew-outbound";

/** The phrase every refusal starts with (the TypeScript runner's MCP and http_request errors use it too). */
export const REFUSED_PREFIX = "refused by the outbound URL policy";

export interface EgressProxy {
  /** `http://127.0.0.1:<port>`: what HTTP_PROXY and HTTPS_PROXY of the child process name. */
  url: string;
  /** The refusals so far (their messages), for logs and the task's error. */
  refusals(): readonly string[];
  close(): Promise<void>;
}

/**
 * proxy-chain answers a refused request with the status's standard reason phrase; HTTPS clients (httpx: the OpenAI
 * SDK, the MCP SDK) report only the status line of a refused CONNECT, so a refusal carries its message there too.
 */
class PolicyProxyServer extends Server {
  override sendSocketResponse(
    socket: Parameters<Server["sendSocketResponse"]>[0],
    statusCode?: number,
    headers?: Record<string, string>,
    message?: string,
  ): void {
    if (statusCode !== REFUSED_STATUS || !message)
      return super.sendSocketResponse(socket, statusCode, headers, message);
    const reason = message.replace(/[^\x20-\x7e]/g, "?").slice(0, 300);
    const body = Buffer.from(message, "utf8");
    socket.setTimeout(1000, () => socket.destroy());
    socket.end(
      `HTTP/1.1 ${REFUSED_STATUS} ${reason}\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\n` +
        `${REFUSED_HEADER}: refused\r\ncontent-length: ${body.length}\r\n\r\n${message}`,
    );
  }
}

/**
 * A forward proxy on loopback for a child process that cannot take the runner's outbound fetch (the CrewAI runtime's
 * Python process): CONNECT tunnels (HTTPS) and plain HTTP requests, each destination judged by the outbound URL
 * policy. A host name is resolved once, refused when any of its addresses is, and connected to the address that was
 * checked, so a second resolution cannot rebind it. A refusal answers 403 with the policy's message.
 */
export async function startEgressProxy(
  policy: OutboundPolicy,
  options: { resolver?: Resolver } = {},
): Promise<EgressProxy> {
  const resolve = options.resolver ?? systemResolver;
  const refusals: string[] = [];
  const refuse = (message: string): never => {
    const text = `${REFUSED_PREFIX}: ${message}`;
    refusals.push(text);
    throw new RequestError(text, REFUSED_STATUS);
  };

  const prepareRequestFunction = async ({
    hostname,
    port,
  }: PrepareRequestFunctionOpts): Promise<PrepareRequestFunctionResult> => {
    const bare = hostname.replace(/^\[(.*)\]$/, "$1");
    // The URL form judges IP literals in every spelling and names such as localhost; the port plays no part.
    const literal = refuseUrl(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}:${port}/`, policy);
    if (literal) return refuse(literal.message);
    if (isIP(bare)) return {};
    let addresses: { address: string; family: number }[];
    try {
      addresses = await resolve(bare);
    } catch (error) {
      throw new RequestError(`${bare} cannot be resolved: ${(error as Error).message}`, 502);
    }
    if (addresses.length === 0) throw new RequestError(`${bare} has no address`, 502);
    for (const { address } of addresses) {
      const refused = refuseAddress(address, policy);
      if (refused) return refuse(`${bare} resolves to ${address}: ${refused.message}`);
    }
    const checked = addresses[0]!;
    return { dnsLookup: pinnedLookup(checked) };
  };

  const server = new PolicyProxyServer({ host: "127.0.0.1", port: 0, prepareRequestFunction, verbose: false });
  await server.listen();
  return {
    url: `http://127.0.0.1:${server.port}`,
    refusals: () => [...refusals],
    close: () => server.close(true),
  };
}

/** A dns.lookup that answers the address already checked, whatever it is asked. */
function pinnedLookup(checked: { address: string; family: number }) {
  return ((
    _hostname: string,
    options: LookupOneOptions | { all: true } | ((...args: unknown[]) => void),
    callback?: (...args: unknown[]) => void,
  ) => {
    const done = (typeof options === "function" ? options : callback)!;
    const all = typeof options === "object" && (options as { all?: boolean }).all;
    if (all) done(null, [{ address: checked.address, family: checked.family } satisfies LookupAddress]);
    else done(null, checked.address, checked.family);
  }) as unknown as NonNullable<PrepareRequestFunctionResult["dnsLookup"]>;
}
