import ipaddr from "ipaddr.js";
import { KubecrewError } from "../errors.ts";

/**
 * The one outbound URL policy: which URLs kubecrew may call (webhooks, LLM providers, OAuth providers, agent tools).
 * Pure: it judges a URL's syntax and an IP address; resolving names and pinning the connection to the checked address
 * happen in `outbound-fetch.ts`.
 */
export interface OutboundPolicy {
  /** 127.0.0.0/8 and ::1. Refused in a cluster (it reaches the component itself); allowed by `kubecrew dev`. */
  allowLoopback: boolean;
  /** RFC 1918, carrier-grade NAT (100.64.0.0/10) and IPv6 unique-local (fc00::/7): a cluster's own services. */
  allowPrivate: boolean;
  /** Addresses or CIDR ranges allowed whatever their kind (except cloud metadata), e.g. `127.0.0.1` for tests. */
  allow: readonly string[];
}

/** What a cluster component allows unless configured otherwise. */
export const clusterPolicy: OutboundPolicy = { allowLoopback: false, allowPrivate: true, allow: [] };
/** `kubecrew dev` runs on the user's machine: loopback is where their receivers live. */
export const localPolicy: OutboundPolicy = { allowLoopback: true, allowPrivate: true, allow: [] };
/**
 * What the task runner applies (LLM providers, MCP servers, http_request) unless its environment says otherwise: a task
 * pod's loopback is the pod itself. The controller sets no outbound variables on task pods, so in a cluster this is the
 * runner's policy exactly; under `kubecrew dev` the task processes inherit dev's environment and its variables.
 */
export const runnerPolicy: OutboundPolicy = localPolicy;

/** Cloud metadata endpoints: refused whatever the policy says (AWS/GCP/Azure/OpenStack, ECS, Alibaba, AWS IPv6). */
const METADATA = ["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"];

export type RefusalReason = "invalid-url" | "scheme" | "metadata" | "loopback" | "private" | "reserved";

export class OutboundRefusedError extends KubecrewError {
  override name = "OutboundRefusedError";
  /** Stable since before the error hierarchy: callers and logs match on it. */
  readonly code = "EOUTBOUND_REFUSED";
  readonly reason: RefusalReason;

  constructor(reason: RefusalReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

/** NAT64's well-known prefix (RFC 6052): DNS64 answers with it on IPv6-only networks, the IPv4 address in its last 32 bits. */
const NAT64 = ipaddr.parseCIDR("64:ff9b::/96");
/**
 * ::/8, reserved by the IETF. Besides :: and ::1 it holds no service a crew could call, only old or internal forms:
 * IPv4-compatible ::a.b.c.d (deprecated, RFC 4291), IPv4-translated ::ffff:0:a.b.c.d (RFC 6145), and the IPv4-mapped
 * ::ffff:a.b.c.d that sockets use for IPv4 (judged as the IPv4 address it is, see unwrap()).
 */
const IETF_RESERVED_V6 = ipaddr.parseCIDR("::/8");
const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96");

/**
 * IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged by the IPv4 address they reach. The
 * local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) is not unwrapped: where its IPv4 address sits depends on the
 * network's prefix length, so it is judged as itself (refused unless allowed).
 */
function unwrap(address: Parsed): Parsed {
  if (address.kind() === "ipv6") {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
    if (v6.match(NAT64)) return ipaddr.fromByteArray(v6.toByteArray().slice(12));
  }
  return address;
}

/** The IPv4 address an IPv4-compatible address (::a.b.c.d) carries, so that the metadata check sees through it. */
function ipv4Compatible(address: Parsed): ipaddr.IPv4 | undefined {
  if (address.kind() !== "ipv6" || !(address as ipaddr.IPv6).match(IPV4_COMPATIBLE)) return undefined;
  return ipaddr.fromByteArray(address.toByteArray().slice(12)) as ipaddr.IPv4;
}

const METADATA_ADDRESSES = METADATA.map((m) => ipaddr.parse(m).toNormalizedString());
const isMetadata = (address: Parsed | undefined) =>
  address !== undefined && METADATA_ADDRESSES.includes(address.toNormalizedString());

function inAllowList(address: Parsed, allow: readonly string[]): boolean {
  return allow.some((entry) => {
    const [range, bits] = entry.includes("/") ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), -1];
    const candidate = range.kind() === address.kind() ? address : unwrapTo(address, range.kind());
    if (!candidate) return false;
    if (bits < 0) return candidate.toNormalizedString() === range.toNormalizedString();
    return candidate.match(range, bits);
  });
}

function unwrapTo(address: Parsed, kind: "ipv4" | "ipv6"): Parsed | undefined {
  if (kind === "ipv6") return (address as ipaddr.IPv4).toIPv4MappedAddress();
  const unwrapped = unwrap(address);
  return unwrapped.kind() === "ipv4" ? unwrapped : undefined;
}

/** Why the policy refuses to connect to `ip`, or undefined when it may. */
export function refuseAddress(ip: string, policy: OutboundPolicy): OutboundRefusedError | undefined {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  if (!ipaddr.isValid(bare)) return new OutboundRefusedError("invalid-url", `${ip} is not an IP address`);
  const address = unwrap(ipaddr.parse(bare));
  if (isMetadata(address) || isMetadata(ipv4Compatible(address))) {
    return new OutboundRefusedError("metadata", `${ip} is a cloud metadata address; calls to it are refused`);
  }
  if (inAllowList(address, policy.allow)) return undefined;
  const range = address.range();
  if (range === "unicast" && address.kind() === "ipv6" && (address as ipaddr.IPv6).match(IETF_RESERVED_V6)) {
    return new OutboundRefusedError("reserved", `${ip} is in ::/8, reserved by the IETF; calls to it are refused`);
  }
  if (range === "unicast") return undefined;
  if (range === "loopback") {
    return policy.allowLoopback
      ? undefined
      : new OutboundRefusedError("loopback", `${ip} is a loopback address; calls to it are refused here`);
  }
  if (range === "private" || range === "uniqueLocal" || range === "carrierGradeNat") {
    return policy.allowPrivate
      ? undefined
      : new OutboundRefusedError("private", `${ip} is a private address; calls to private addresses are refused`);
  }
  // linkLocal, unspecified, multicast, broadcast, reserved, 6to4, teredo, …: never a service a crew should call.
  return new OutboundRefusedError("reserved", `${ip} is a ${range} address; calls to it are refused`);
}

/** Host names that are loopback by definition (RFC 6761), refused without asking DNS when loopback is. */
const isLocalhostName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/**
 * What can be judged without DNS: the scheme (http and https only), IP-literal hosts and `localhost`. Kickoff uses this
 * to answer 400 at once; delivery checks the resolved address again (`outbound-fetch.ts`).
 */
export function refuseUrl(url: string | URL, policy: OutboundPolicy): OutboundRefusedError | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return new OutboundRefusedError("invalid-url", "not an absolute URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return new OutboundRefusedError("scheme", `${parsed.protocol} URLs are refused: only http and https`);
  }
  const host = parsed.hostname.toLowerCase().replace(/\.$/, "");
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  if (ipaddr.isValid(bare)) return refuseAddress(bare, policy);
  if (isLocalhostName(host) && !policy.allowLoopback) {
    return new OutboundRefusedError("loopback", `${host} is a loopback name; calls to it are refused here`);
  }
  return undefined;
}
