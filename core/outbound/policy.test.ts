import { describe, expect, it } from "vitest";
import { clusterPolicy, localPolicy, refuseAddress, refuseUrl, type OutboundPolicy } from "./policy.ts";

const reason = (url: string, policy: OutboundPolicy = clusterPolicy) => refuseUrl(url, policy)?.reason;

describe("refuseUrl", () => {
  it("allows http and https only", () => {
    expect(reason("https://hooks.example.com/x")).toBeUndefined();
    expect(reason("http://hooks.example.com/x")).toBeUndefined();
    for (const url of ["file:///etc/passwd", "javascript:alert(1)", "ftp://example.com/", "gopher://x/", "data:,x"]) {
      expect(reason(url), url).toBe("scheme");
    }
    expect(reason("not a url")).toBe("invalid-url");
  });

  it("refuses cloud metadata whatever the policy allows", () => {
    const open: OutboundPolicy = { allowLoopback: true, allowPrivate: true, allow: ["169.254.0.0/16", "fd00::/8"] };
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://[::ffff:169.254.169.254]/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://0xa9.0xfe.0xa9.0xfe/", // the URL parser normalises other IPv4 spellings first
      "http://2852039166/",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://[64:ff9b::a9fe:a9fe]/",
    ]) {
      expect(reason(url, open), url).toBe("metadata");
    }
  });

  it("refuses link-local, unspecified, multicast and broadcast addresses", () => {
    for (const url of [
      "http://169.254.1.1/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "http://[::]/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
    ]) {
      expect(reason(url, localPolicy), url).toBe("reserved");
    }
  });

  it("refuses loopback in a cluster and allows it locally", () => {
    for (const url of ["http://127.0.0.1:8080/", "http://127.1.2.3/", "http://[::1]/", "http://[::ffff:127.0.0.1]/"]) {
      expect(reason(url), url).toBe("loopback");
      expect(reason(url, localPolicy), url).toBeUndefined();
    }
    expect(reason("http://localhost:9000/")).toBe("loopback");
    expect(reason("http://api.localhost./")).toBe("loopback");
    expect(reason("http://localhost:9000/", localPolicy)).toBeUndefined();
  });

  it("allows private ranges unless configured otherwise", () => {
    const strict: OutboundPolicy = { ...clusterPolicy, allowPrivate: false };
    for (const url of [
      "http://10.0.0.5/",
      "http://192.168.1.1/",
      "http://172.16.0.1/",
      "http://[fd12::1]/",
      "http://100.64.0.1/",
    ]) {
      expect(reason(url), url).toBeUndefined();
      expect(reason(url, strict), url).toBe("private");
    }
  });

  it("lets an allow-list open single addresses and ranges", () => {
    const tests: OutboundPolicy = { ...clusterPolicy, allow: ["127.0.0.1", "10.1.0.0/16"] };
    expect(reason("http://127.0.0.1:1234/", tests)).toBeUndefined();
    expect(reason("http://[::ffff:127.0.0.1]/", tests)).toBeUndefined();
    expect(reason("http://127.0.0.2/", tests)).toBe("loopback");
    expect(refuseAddress("10.1.2.3", { ...tests, allowPrivate: false })).toBeUndefined();
    expect(refuseAddress("10.2.0.1", { ...tests, allowPrivate: false })?.reason).toBe("private");
  });

  it("names the address and why in its message", () => {
    expect(refuseUrl("http://169.254.169.254/", clusterPolicy)?.message).toBe(
      "169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
    expect(refuseUrl("file:///etc/passwd", clusterPolicy)?.message).toBe("file: URLs are refused: only http and https");
  });
});
