import { isIPv4, isIPv6 } from "node:net";
import type { Request } from "express";
import ipaddr from "ipaddr.js";

/** Whether an IP address is loopback: 127.0.0.0/8, ::1, or an IPv4-mapped ::ffff:127.x.x.x. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address || !(isIPv4(address) || isIPv6(address))) return false;
  return ipaddr.process(address).range() === "loopback";
}

/**
 * Whether a Host header names this machine by a loopback name: localhost, *.localhost (which browsers resolve to
 * loopback themselves, RFC 6761), 127.x.x.x or [::1], with any port. A page that reached a loopback server through
 * DNS rebinding sends its own host name here, so it is refused.
 */
export function isLoopbackHost(header: string | undefined): boolean {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/i.exec(header ?? "");
  if (!match) return false;
  const name = match[1]!.toLowerCase();
  if (name.startsWith("[")) return isLoopbackAddress(name.slice(1, -1));
  if (isIPv4(name)) return isLoopbackAddress(name);
  return name === "localhost" || /^([a-z0-9-]+\.)+localhost$/.test(name);
}

/**
 * Why this request may not be signed in as `kubecrew dev`'s local user, or undefined when it may: it must come from
 * a loopback address (the TCP peer, not a forwarded header) and name the server by a loopback Host.
 */
export function localSignInRefusal(req: Request): string | undefined {
  if (!isLoopbackAddress(req.socket.remoteAddress)) {
    return "The local user is signed in only from this machine; this request came from another address";
  }
  if (!isLoopbackHost(req.headers.host)) {
    return (
      "The local user is signed in only at a loopback address (localhost, 127.0.0.1 or [::1]); " +
      "open the console at http://localhost:<port>/console/"
    );
  }
  return undefined;
}

/** Whether a server bound to `host` is reachable from this machine only (HOST=127.0.0.1, ::1 or localhost). */
export function isLoopbackBind(host: string): boolean {
  return host.toLowerCase() === "localhost" || isLoopbackAddress(host);
}
