import { describe, expect, it } from "vitest";
import { sourceAddressKey } from "./source-address.ts";

describe("sourceAddressKey", () => {
  it("keeps IPv4 addresses and unwraps IPv4-mapped IPv6", () => {
    expect(sourceAddressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(sourceAddressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("counts every address of an IPv6 /64 as one", () => {
    const key = sourceAddressKey("2001:db8:1:2::1");
    expect(key).toBe("2001:db8:1:2::/64");
    expect(sourceAddressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe(key);
    expect(sourceAddressKey("2001:DB8:1:2:0:0:0:9")).toBe(key);
    expect(sourceAddressKey("2001:db8:1:3::1")).not.toBe(key);
    expect(sourceAddressKey("::1")).toBe("0:0:0:0::/64");
    expect(sourceAddressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  it("has a key for a missing address", () => {
    expect(sourceAddressKey(undefined)).toBe("unknown");
  });
});
