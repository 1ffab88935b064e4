import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import { OutboundRefusedError, refuseAddress, refuseUrl, type OutboundPolicy } from "../../core/outbound/policy.ts";

/** Resolves a host name to its addresses (injectable so tests can answer with any address without DNS). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export type Fetch = typeof globalThis.fetch;

/** A fetch that only ever connects where the policy allows. */
export interface OutboundClient {
  /** fetch(), checked: throws OutboundRefusedError before any connection to a refused address. */
  fetch: Fetch;
  /** The policy's verdict on a URL without DNS (scheme, IP literals, localhost): undefined when it may be called. */
  refuse(url: string | URL): OutboundRefusedError | undefined;
  /** The checked undici dispatcher itself, for SDKs that take a dispatcher instead of a fetch (jsforce). */
  dispatcher: Agent;
  close(): Promise<void>;
}

export interface OutboundOptions {
  resolver?: Resolver;
  /** Connection timeout in ms (undici's default is 10 s). */
  connectTimeoutMs?: number;
}

/**
 * Every connection (the first request, each redirect, each keep-alive reconnect) goes through one connector that
 * resolves the host once, refuses it when any of its addresses is refused, and connects to the address it checked
 * (TLS still verifies the certificate against the host name). There is no second resolution to rebind.
 */
export function createOutboundClient(policy: OutboundPolicy, options: OutboundOptions = {}): OutboundClient {
  const resolve = options.resolver ?? systemResolver;
  const connectTimeout = options.connectTimeoutMs ?? 10_000;
  const connector = buildConnector({ timeout: connectTimeout });

  const checkedConnect: buildConnector.connector = (connectOptions, callback) => {
    const hostname = connectOptions.hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(hostname)) {
      const refused = refuseAddress(hostname, policy);
      if (refused) return callback(refused, null);
      return connector(connectOptions, callback);
    }
    resolve(hostname)
      .then(
        (addresses) => {
          if (addresses.length === 0) throw new Error(`${hostname} has no address`);
          for (const { address } of addresses) {
            const refused = refuseAddress(address, policy);
            if (refused) {
              throw new OutboundRefusedError(refused.reason, `${hostname} resolves to ${address}: ${refused.message}`);
            }
          }
          connector({ ...connectOptions, hostname: addresses[0]!.address, servername: hostname }, callback);
        },
        (err: Error) => callback(err, null),
      )
      .catch((err: Error) => callback(err, null));
  };
  const dispatcher = new Agent({ connect: checkedConnect, connectTimeout });

  const checkedFetch = async (input: Parameters<Fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    const refused = refuseUrl(url, policy);
    if (refused) throw refused;
    try {
      const fromRequest = input instanceof Request ? await requestInit(input) : {};
      return (await undiciFetch(url, {
        ...fromRequest,
        ...(init as object),
        dispatcher,
      } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    } catch (err) {
      // fetch wraps connector errors in "TypeError: fetch failed"; the refusal is the part worth reporting.
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof OutboundRefusedError) throw cause;
      throw err;
    }
  };

  return {
    fetch: checkedFetch as Fetch,
    refuse: (url) => refuseUrl(url, policy),
    dispatcher,
    close: () => dispatcher.close(),
  };
}

/** A Request's parts as init, so a Request made by the global fetch's classes can be sent by undici's fetch. */
async function requestInit(request: Request): Promise<RequestInit> {
  const body = request.body ? await request.arrayBuffer() : undefined;
  return { method: request.method, headers: request.headers, body, redirect: request.redirect, signal: request.signal };
}
