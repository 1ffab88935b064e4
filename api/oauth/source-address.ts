import { isIPv4, isIPv6 } from "node:net";

/**
 * The rate-limit key of a source address. An IPv6 host usually holds a whole /64, so the /64 counts as one
 * address (otherwise each request could come from a fresh one); IPv4-mapped IPv6 addresses count as their IPv4.
 */
export function sourceAddressKey(ip: string | undefined): string {
  if (!ip) return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return ip;
  return expandIPv6(ip).slice(0, 4).join(":") + "::/64";
}

function expandIPv6(ip: string): string[] {
  const [head = "", tail] = ip.split("%")[0]!.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ""));
}
