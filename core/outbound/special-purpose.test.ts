import { describe, expect, it } from "vitest";
import { refuseAddress, refuseUrl, type OutboundPolicy } from "./policy.ts";

/**
 * The IANA IPv4 and IPv6 special-purpose address registries (and multicast), row by row: each range's first and last
 * address and some inside are refused. Loopback and the private ranges are opened by the policy's explicit options
 * (allowLoopback, allowPrivate) and by nothing else; every other row is refused whatever they say.
 */
interface Row {
  range: string;
  addresses: string[];
  /** The option that opens the range, if any. */
  opens?: "allowLoopback" | "allowPrivate";
}

/** The last address of the IPv6 range whose fixed groups are `prefix` (the rest all ones). */
const lastOf = (prefix: string) => [...prefix.split(":"), ...Array<string>(8).fill("ffff")].slice(0, 8).join(":");

const ipv4: Row[] = [
  { range: "0.0.0.0/8 this network", addresses: ["0.0.0.0", "0.255.255.255", "0.1.2.3"] },
  { range: "10.0.0.0/8 private", addresses: ["10.0.0.0", "10.255.255.255", "10.1.2.3"], opens: "allowPrivate" },
  {
    range: "100.64.0.0/10 carrier-grade NAT",
    addresses: ["100.64.0.0", "100.127.255.255", "100.100.1.1"],
    opens: "allowPrivate",
  },
  { range: "127.0.0.0/8 loopback", addresses: ["127.0.0.0", "127.255.255.255", "127.0.0.1"], opens: "allowLoopback" },
  { range: "169.254.0.0/16 link-local", addresses: ["169.254.0.0", "169.254.255.255", "169.254.1.1"] },
  { range: "172.16.0.0/12 private", addresses: ["172.16.0.0", "172.31.255.255", "172.20.1.1"], opens: "allowPrivate" },
  { range: "192.0.0.0/24 IETF protocol assignments", addresses: ["192.0.0.0", "192.0.0.255", "192.0.0.8"] },
  { range: "192.0.2.0/24 documentation", addresses: ["192.0.2.0", "192.0.2.255", "192.0.2.1"] },
  { range: "192.88.99.0/24 6to4 relay anycast", addresses: ["192.88.99.0", "192.88.99.255", "192.88.99.1"] },
  {
    range: "192.168.0.0/16 private",
    addresses: ["192.168.0.0", "192.168.255.255", "192.168.1.1"],
    opens: "allowPrivate",
  },
  { range: "198.18.0.0/15 benchmarking", addresses: ["198.18.0.0", "198.19.255.255", "198.18.5.5"] },
  { range: "198.51.100.0/24 documentation", addresses: ["198.51.100.0", "198.51.100.255", "198.51.100.7"] },
  { range: "203.0.113.0/24 documentation", addresses: ["203.0.113.0", "203.0.113.255", "203.0.113.9"] },
  { range: "224.0.0.0/4 multicast", addresses: ["224.0.0.0", "239.255.255.255", "233.1.2.3"] },
  { range: "240.0.0.0/4 reserved", addresses: ["240.0.0.0", "255.255.255.254", "250.1.2.3"] },
  { range: "255.255.255.255/32 limited broadcast", addresses: ["255.255.255.255"] },
];

const ipv6: Row[] = [
  { range: "::1/128 loopback", addresses: ["::1"], opens: "allowLoopback" },
  { range: "::/128 unspecified", addresses: ["::"] },
  {
    // The rest of ::/8: IPv4-compatible ::/96 (::a9fe:a9fe was 169.254.169.254), IPv4-translated ::ffff:0:0:0/96, …
    range: "::/8 reserved by the IETF",
    addresses: [lastOf("ff"), "::2", "::a9fe:a9fe", "::808:808", "::a00:1", "::ffff:0:808:808", "1::", "::1:0:0:0"],
  },
  {
    // Judged by the IPv4 address they carry: the first and last carry 0.0.0.0 and 255.255.255.255.
    range: "::ffff:0:0/96 IPv4-mapped",
    addresses: ["::ffff:0:0", "::ffff:ffff:ffff", "::ffff:c000:201", "::ffff:a9fe:101"],
  },
  {
    range: "64:ff9b::/96 IPv4/IPv6 translation",
    addresses: ["64:ff9b::", "64:ff9b::ffff:ffff", "64:ff9b::c000:201", "64:ff9b::a9fe:101"],
  },
  {
    range: "64:ff9b:1::/48 local-use IPv4/IPv6 translation",
    addresses: ["64:ff9b:1::", lastOf("64:ff9b:1:ffff:ffff"), "64:ff9b:1::808:808", "64:ff9b:1:808:800::"],
  },
  { range: "100::/64 discard", addresses: ["100::", "100::ffff:ffff:ffff:ffff", "100::1"] },
  { range: "2001::/23 IETF protocol assignments", addresses: ["2001::", lastOf("2001:1ff"), "2001:1::1", "2001:3::1"] },
  {
    range: "2001::/32 Teredo",
    addresses: ["2001::", lastOf("2001:0"), "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
  },
  { range: "2001:2::/48 benchmarking", addresses: ["2001:2::", lastOf("2001:2:0"), "2001:2::1"] },
  { range: "2001:20::/28 ORCHIDv2", addresses: ["2001:20::", lastOf("2001:2f"), "2001:28::1"] },
  { range: "2001:db8::/32 documentation", addresses: ["2001:db8::", lastOf("2001:db8"), "2001:db8::1"] },
  { range: "3fff::/20 documentation", addresses: ["3fff::", lastOf("3fff:fff"), "3fff:123::1"] },
  {
    range: "2002::/16 6to4 (carrying private IPv4 addresses among others)",
    addresses: ["2002::", lastOf("2002"), "2002:a00:1::1", "2002:c0a8:101::1", "2002:7f00:1::1"],
  },
  { range: "fc00::/7 unique-local", addresses: ["fc00::", lastOf("fdff"), "fd12:3456::1"], opens: "allowPrivate" },
  { range: "fe80::/10 link-local", addresses: ["fe80::", lastOf("febf"), "fe80::1"] },
  { range: "fec0::/10 site-local (deprecated)", addresses: ["fec0::", lastOf("feff"), "fec0::1"] },
  { range: "ff00::/8 multicast", addresses: ["ff00::", lastOf("ffff"), "ff02::1"] },
];

const nothing: OutboundPolicy = { allowLoopback: false, allowPrivate: false, allow: [] };
const everything: OutboundPolicy = { allowLoopback: true, allowPrivate: true, allow: [] };
const only = (option: "allowLoopback" | "allowPrivate"): OutboundPolicy => ({ ...nothing, [option]: true });
const other = (option: "allowLoopback" | "allowPrivate") =>
  only(option === "allowLoopback" ? "allowPrivate" : "allowLoopback");
const url = (ip: string) => (ip.includes(":") ? `http://[${ip}]:8080/mcp` : `http://${ip}:8080/mcp`);

describe.each([...ipv4, ...ipv6])("$range", ({ addresses, opens }) => {
  it.each(addresses)("refuses %s, as an address and as a URL's host, when no option opens it", (ip) => {
    expect(refuseAddress(ip, nothing), ip).toBeDefined();
    expect(refuseUrl(url(ip), nothing), ip).toBeDefined();
    if (opens) {
      expect(refuseAddress(ip, other(opens)), ip).toBeDefined();
      expect(refuseUrl(url(ip), other(opens)), ip).toBeDefined();
    } else {
      expect(refuseAddress(ip, everything), ip).toBeDefined();
      expect(refuseUrl(url(ip), everything), ip).toBeDefined();
    }
  });

  if (opens) {
    it.each(addresses)(`allows %s when ${opens} is set, as it did`, (ip) => {
      expect(refuseAddress(ip, only(opens)), ip).toBeUndefined();
      expect(refuseUrl(url(ip), only(opens)), ip).toBeUndefined();
    });
  }
});

describe("public addresses", () => {
  // Next to special ranges' edges, and the forms that reach a public IPv4 address: IPv4-mapped (what a dual-stack
  // socket uses) and NAT64's well-known prefix (what DNS64 answers on IPv6-only clusters).
  const reachable = [
    "8.8.8.8",
    "1.1.1.1",
    "1.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "2001:200::1",
    "2003::1",
    "::ffff:808:808",
    "64:ff9b::808:808",
  ];
  it.each(reachable)("allows %s under every policy", (ip) => {
    for (const policy of [nothing, everything]) {
      expect(refuseAddress(ip, policy), ip).toBeUndefined();
      expect(refuseUrl(url(ip), policy), ip).toBeUndefined();
    }
  });
});

describe("::/8 beyond loopback", () => {
  it("refuses the IPv4-compatible form of the metadata address as metadata, whatever the policy allows", () => {
    const open: OutboundPolicy = { ...everything, allow: ["::/8", "169.254.0.0/16"] };
    expect(refuseUrl("http://[::a9fe:a9fe]/", open)?.reason).toBe("metadata");
    expect(refuseUrl("http://[::169.254.169.254]/latest/meta-data/", everything)?.message).toBe(
      "::a9fe:a9fe is a cloud metadata address; calls to it are refused",
    );
  });

  it("says why, and opens only to an explicit allow-list entry", () => {
    expect(refuseAddress("::808:808", everything)?.message).toBe(
      "::808:808 is in ::/8, reserved by the IETF; calls to it are refused",
    );
    expect(refuseAddress("::808:808", { ...nothing, allow: ["::/96"] })).toBeUndefined();
    expect(refuseAddress("::808:808", { ...nothing, allow: ["8.8.8.8"] })?.reason).toBe("reserved");
  });
});
